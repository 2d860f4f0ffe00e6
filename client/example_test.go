package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/plantstore/plantstore/client"
)

// Create a plant, read it again only if it changed, change it unless
// someone else did meanwhile, list every plant and delete it. README.md's
// "Go client" shows this body as it is (TestReadmeShowsTheExample).
func Example() {
	ctx := context.Background()
	c, err := client.New("http://localhost:8080", client.WithToken(os.Getenv("PLANTSTORE_TOKEN")))
	if err != nil {
		log.Fatal(err) // a malformed address, or an empty token
	}

	// A create is idempotent by id: the same plant sent again is a success.
	p, err := c.Create(ctx, client.NewPlant{ID: 42, Name: "Monstera deliciosa", Tag: "aroid"})
	var apiErr *client.Error
	switch {
	case errors.Is(err, client.ErrConflict):
		log.Fatal("another plant has id 42")
	case errors.As(err, &apiErr):
		log.Fatalf("refused: %d, error %d: %s (request %s)", apiErr.StatusCode, apiErr.Code, apiErr.Message, apiErr.RequestID)
	case err != nil:
		log.Fatal(err) // no answer: the service could not be reached
	}

	// Read it again only if it changed since.
	if _, err := c.Get(ctx, 42, client.IfNoneMatch(p.ETag)); errors.Is(err, client.ErrNotModified) {
		fmt.Println("unchanged")
	}

	// Rename it and remove its tag, unless someone changed it since.
	p, err = c.Change(ctx, 42, client.Patch{}.SetName("Monstera adansonii").RemoveTag(), client.IfMatch(p.ETag))
	if errors.Is(err, client.ErrPreconditionFailed) {
		log.Fatal("changed by someone else: read it again")
	} else if err != nil {
		log.Fatal(err)
	}

	// List every plant, a page after another.
	for plant, err := range c.List(ctx, client.ListOptions{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(plant.ID, plant.Name, plant.Tag)
	}

	if err := c.Delete(ctx, 42, client.IfMatch(p.ETag)); err != nil {
		log.Fatal(err)
	}
}

// An answer the API refuses is an *Error with what the service said.
func ExampleError() {
	api := cannedAPI(map[string]canned{
		"POST /plants": {409, nil, `{"error":40901,"message":"a plant with this id exists with a different name or tag"}`},
	})
	defer api.Close()
	c, err := client.New(api.URL, client.WithToken("a JWT"))
	if err != nil {
		log.Fatal(err)
	}

	_, err = c.Create(context.Background(), client.NewPlant{ID: 7, Name: "Monstera adansonii"})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code == client.CodeConflict, apiErr.Message, apiErr.RequestID)
	}
	fmt.Println(errors.Is(err, client.ErrConflict))
	fmt.Println(err)
	// Output:
	// 409 true a plant with this id exists with a different name or tag req-1
	// true
	// plantstore: 409 Conflict, error 40901: a plant with this id exists with a different name or tag (request req-1)
}

// List follows the service's pages: here two of two plants and one of one.
func ExampleClient_List() {
	api := cannedAPI(map[string]canned{
		"GET /plants?limit=2&tag=aroid": {200, http.Header{"Link": {`</plants?limit=2&after=8&tag=aroid>; rel="next"`}},
			`[{"id":7,"name":"Monstera deliciosa","tag":"aroid"},{"id":8,"name":"Philodendron","tag":"aroid"}]`},
		"GET /plants?limit=2&after=8&tag=aroid": {200, nil, `[{"id":12,"name":"Anthurium","tag":"aroid"}]`},
	})
	defer api.Close()
	c, err := client.New(api.URL, client.WithToken("a JWT"))
	if err != nil {
		log.Fatal(err)
	}

	for p, err := range c.List(context.Background(), client.ListOptions{Tag: "aroid", PageSize: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(p.ID, p.Name)
	}
	// Output:
	// 7 Monstera deliciosa
	// 8 Philodendron
	// 12 Anthurium
}

// A read with IfNoneMatch answers ErrNotModified, and no plant, while the
// plant is in a state the condition lists; the error says which.
func ExampleClient_Get_notModified() {
	api := cannedAPI(map[string]canned{
		"GET /plants/7": {304, http.Header{"ETag": {`"oHWlwy3amqwLe8DvEsFOaw"`}}, ""},
	})
	defer api.Close()
	c, err := client.New(api.URL, client.WithToken("a JWT"))
	if err != nil {
		log.Fatal(err)
	}

	p, err := c.Get(context.Background(), 7, client.IfNoneMatch(`"rb0cmqAOb3UZCXXMRRxlVA"`, `"oHWlwy3amqwLe8DvEsFOaw"`))
	var current *client.NotModifiedError
	if errors.As(err, &current) {
		fmt.Println(errors.Is(err, client.ErrNotModified), p == client.Plant{}, current.ETag)
	}
	// Output: true true "oHWlwy3amqwLe8DvEsFOaw"
}

// Feed goes on from a cursor saved by an earlier run, and gives the one to
// save for the next: here two pages of two events a request, the second
// the feed's end.
func ExampleClient_Feed() {
	api := cannedAPI(map[string]canned{
		"GET /events?limit=2&after=c1": {200, http.Header{"Link": {`</events?limit=2&after=c3>; rel="next"`}},
			`[{"id":"evt_2","type":"plant.created","number":2,"time":"2026-12-01T09:31:12.5Z","plant":{"id":7,"name":"Monstera deliciosa","tag":"aroid"}},` +
				`{"id":"evt_3","type":"plant.changed","number":3,"time":"2026-12-01T09:32:00Z","plant":{"id":7,"name":"Monstera adansonii"}}]`},
		"GET /events?limit=2&after=c3": {200, http.Header{"Link": {`</events?limit=2&after=c4>; rel="next"`}},
			`[{"id":"evt_4","type":"plant.deleted","number":4,"time":"2026-12-01T09:33:00Z","plant":{"id":7,"name":"Monstera adansonii"}}]`},
	})
	defer api.Close()
	c, err := client.New(api.URL, client.WithToken("a JWT"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	feed := c.Feed(client.FeedOptions{After: "c1", PageSize: 2})
	for e, err := range feed.Events(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(e.Number, e.Type, e.Plant.ID, e.Plant.Name)
	}
	saved, err := feed.Cursor(ctx) // the API's own cursor: any reader of the feed takes it
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("saved", saved)
	// Output:
	// 2 plant.created 7 Monstera deliciosa
	// 3 plant.changed 7 Monstera adansonii
	// 4 plant.deleted 7 Monstera adansonii
	// saved c4
}

// canned is one answer of cannedAPI.
type canned struct {
	status int
	header http.Header
	body   string
}

// cannedAPI answers each request "METHOD /path?query" with its canned
// answer, as the service would, and any other with 404; the examples run
// without a service. The tests of the client against the served API are in
// adapters/httpapi (client_*_test.go).
func cannedAPI(answers map[string]canned) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.Method+" "+r.URL.RequestURI()]
		if !ok {
			a = canned{404, nil, `{"error":40401,"message":"no such route"}`}
		}
		for k, vs := range a.header {
			w.Header()[k] = vs
		}
		w.Header().Set("X-Request-ID", "req-1")
		if a.body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
}
