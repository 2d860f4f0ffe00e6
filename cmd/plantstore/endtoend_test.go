package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/client"
)

// Each store, wired into the whole service, serves every plant operation end
// to end, the conditional ones, a list walked page by page and a removed
// tag through the Go client as a caller uses it (listed plants and events
// with the ETags GET answers, a feed cursor saved inside a page that the
// API takes), and answers the admin
// listener's probes and metrics. The HTTP contract itself is tested in
// adapters/httpapi on the memory store, and what the stores guarantee (the preconditions' atomicity across two stores
// on one database too) by the store suite, adapters/storetest.
func TestEachStoreEndToEnd(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, nil)
		created := s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`)
		created.expect(t, 200, `{"name":"Fern","tag":"shade"}`)
		s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`).expect(t, 200, `{"name":"Fern","tag":"shade"}`)
		s.create(t, `{"id":5,"name":"Moss"}`).expectError(t, 409, "40901")
		// A token signed by the key of the PEM file is verified as well.
		s.do(t, "POST", "/plants", map[string]string{
			"Authorization": "Bearer " + s.keys.Sign(t, jwt.SigningMethodEdDSA, s.keys.Ed, nil), "Content-Type": "application/json",
		}, []byte(`{"id":-7,"name":"Aloe"}`)).expect(t, 200, `{"name":"Aloe"}`)
		s.do(t, "POST", "/plants", nil, nil).expectError(t, 401, "40101")

		s.call(t, "GET", "/plants/5").expect(t, 200, `{"id":5,"name":"Fern","tag":"shade"}`)
		first := s.call(t, "GET", "/plants?limit=1")
		first.expect(t, 200, `[{"id":-7,"name":"Aloe"}]`)
		if link := first.header.Get("Link"); link != `</plants?limit=1&after=-7>; rel="next"` {
			t.Fatalf("first page Link %q", link)
		}
		s.call(t, "GET", "/plants?limit=1&after=-7").expect(t, 200, `[{"id":5,"name":"Fern","tag":"shade"}]`)

		ctx, etag := context.Background(), created.header.Get("ETag")
		c := s.apiClient(t, s.token(t, nil))
		var current *client.NotModifiedError
		if p, err := c.Get(ctx, 5, client.IfNoneMatch(etag)); !errors.As(err, &current) || current.ETag != etag || p != (client.Plant{}) {
			t.Fatalf("read if none match %q: %+v %v", etag, p, err)
		}
		changed, err := c.Change(ctx, 5, client.Patch{}.SetName("Moss"), client.IfMatch(etag))
		if err != nil || changed.Name != "Moss" || changed.Tag != "shade" || changed.ETag == etag {
			t.Fatalf("change: %+v %v", changed, err)
		}
		if _, err := c.Change(ctx, 5, client.Patch{}, client.IfMatch(etag)); !errors.Is(err, client.ErrPreconditionFailed) {
			t.Fatalf("change with a stale ETag: %v", err)
		}
		// A replay compares with the plant as it is now.
		s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`).expectError(t, 409, "40901")
		if p, err := c.Create(ctx, client.NewPlant{ID: 5, Name: "Moss", Tag: "shade"}); err != nil || p != changed {
			t.Fatalf("replay of the changed plant: %+v %v, want %+v", p, err, changed)
		}
		s.call(t, "GET", "/plants?tag=shade").expect(t, 200, `[{"id":5,"name":"Moss","tag":"shade"}]`)
		var listed []client.Plant
		for p, err := range c.List(ctx, client.ListOptions{PageSize: 1}) {
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			listed = append(listed, p)
		}
		// Each with the ETag that GET answers, as the store rendered it.
		aloe, err := c.Get(ctx, -7)
		if want := []client.Plant{aloe, changed}; err != nil || !slices.Equal(listed, want) {
			t.Fatalf("listed %+v, want %+v (%v)", listed, want, err)
		}
		untagged, err := c.Change(ctx, 5, client.Patch{}.RemoveTag(), client.IfMatch(changed.ETag))
		if err != nil || untagged.Name != "Moss" || untagged.Tag != "" {
			t.Fatalf("remove the tag: %+v %v", untagged, err)
		}
		if p, err := c.Get(ctx, 5); err != nil || p != untagged {
			t.Fatalf("read without the tag: %+v %v, want %+v", p, err, untagged)
		}
		reader := s.apiClient(t, s.keys.Sign(t, jwt.SigningMethodEdDSA, s.keys.Ed, jwt.MapClaims{"scope": "plants:read"}))
		if err := reader.Delete(ctx, 5); !errors.Is(err, client.ErrForbidden) {
			t.Fatalf("delete without the scope: %v", err)
		}
		if err := c.Delete(ctx, 5, client.IfMatch(changed.ETag)); !errors.Is(err, client.ErrPreconditionFailed) {
			t.Fatalf("delete with a stale ETag: %v", err)
		}
		if err := c.Delete(ctx, 5, client.IfMatch(untagged.ETag)); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if _, err := reader.Get(ctx, 5); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("read after the delete: %v", err)
		}
		s.call(t, "DELETE", "/plants/5").expectError(t, 404, "40402")
		s.create(t, `{"id":5,"name":"Ivy"}`).expect(t, 200, `{"name":"Ivy"}`)

		// The feed holds each write that wrote, once, in order, a page of two
		// at a time; every page links to the next, the empty one too.
		want := []string{"plant.created 5 Fern", "plant.created -7 Aloe", "plant.changed 5 Moss", "plant.changed 5 Moss", "plant.deleted 5 Moss", "plant.created 5 Ivy"}
		var got []string
		next := "/events?limit=2"
		for deadline := time.Now().Add(30 * time.Second); len(got) < len(want); {
			r := s.call(t, "GET", next)
			var events []struct {
				Type  string
				Plant struct {
					ID   int64
					Name string
				}
			}
			if err := json.Unmarshal([]byte(r.body), &events); r.status != 200 || err != nil {
				t.Fatalf("GET %s: %d %s", next, r.status, r.body)
			}
			for _, e := range events {
				got = append(got, fmt.Sprintf("%s %d %s", e.Type, e.Plant.ID, e.Plant.Name))
			}
			link, ok := strings.CutSuffix(r.header.Get("Link"), `>; rel="next"`)
			if !ok || !strings.HasPrefix(link, "</events?limit=2&after=") {
				t.Fatalf("GET %s: Link %q", next, r.header.Get("Link"))
			}
			next = link[1:]
			if len(events) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the feed shows %v after 30s, want %v", got, want)
				}
				time.Sleep(10 * time.Millisecond) // the horizon may be held back by other work on the server
			}
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Fatalf("the feed shows %v, want %v", got, want)
		}
		// The client's events carry their plants' ETags: the latest event
		// of each plant holds the ETag that GET answers.
		latest, ids := map[int64]client.Plant{}, []string{}
		for e, err := range c.Feed(client.FeedOptions{PageSize: 4}).Events(ctx) {
			if err != nil {
				t.Fatalf("feed: %v", err)
			}
			latest[e.Plant.ID], ids = e.Plant, append(ids, e.ID)
		}
		ivy, err := c.Get(ctx, 5)
		if err != nil || len(latest) != 2 || latest[5] != ivy || latest[-7] != aloe {
			t.Fatalf("the latest events hold %+v; GET answers %+v and %+v (%v)", latest, ivy, aloe, err)
		}
		// A walk stopped inside a page saves the store's own cursor: the API
		// takes it and goes on after the last event yielded.
		f := c.Feed(client.FeedOptions{PageSize: 4})
		for range f.Events(ctx) {
			break
		}
		cursor, err := f.Cursor(ctx)
		r := s.call(t, "GET", "/events?after="+cursor)
		var after []struct{ ID string }
		if err != nil || r.status != 200 || json.Unmarshal([]byte(r.body), &after) != nil || len(after) != len(ids)-1 || after[0].ID != ids[1] {
			t.Fatalf("GET /events?after=%s (%v): %d %s, want the events after %s", cursor, err, r.status, r.body, ids[0])
		}

		s.adminGet(t, "/healthz").expect(t, 200, "")
		s.adminGet(t, "/readyz").expect(t, 200, "")
		m := s.adminGet(t, "/metrics").body
		for _, want := range []string{
			`plantstore_plant_operations_total{operation="create",outcome="created"} 3`,
			`plantstore_plant_operations_total{operation="create",outcome="replayed"} 2`,
			`plantstore_plant_operations_total{operation="create",outcome="conflict"} 2`,
			`plantstore_plant_operations_total{operation="change",outcome="changed"} 2`,
			`plantstore_plant_operations_total{operation="change",outcome="precondition_failed"} 1`,
			`plantstore_plant_operations_total{operation="delete",outcome="precondition_failed"} 1`,
			`plantstore_plant_operations_total{operation="events",outcome="listed"}`,
			`plantstore_auth_failures_total{reason="missing"} 1`,
			`plantstore_build_info{`,
			`go_goroutines`,
		} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	})
}
