package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/adapters/httpapi/referencetest"
)

// screenshotEnv, when set, is where TestReferencePageInABrowser saves a
// screenshot of the page after its create (README's docs/api-reference.png),
// and beside it, as answerText names it, the text that the picture shows.
const screenshotEnv = "PLANTSTORE_SCREENSHOT"

// screenshotText is the text that docs/api-reference.png shows, saved with
// it: a page that shows other text now is not the one in the picture.
const screenshotText = "../../docs/api-reference.txt"

// answerText is the file of the text shown by the picture at path.
func answerText(path string) string { return strings.TrimSuffix(path, filepath.Ext(path)) + ".txt" }

// The API reference page in headless Chromium, on each store: it loads
// with no console error and no request to another host and lists every
// operation of the document, opened by the link of one of them; then, with
// a token pasted in its Authorize dialog, it sends every operation of the
// plants and the event feed through "Try it out", each showing the
// parameters the document gives it, typed in the page's own inputs. Each
// answer the page shows has the status expected, and the service's access
// log shows the request on the real path (/plants/4242, never the template
// /plants/%7Bid%7D).
func TestReferencePageInABrowser(t *testing.T) {
	browserPath := referencetest.Find(t)
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			// The picture is the embedded store's: both show the same page.
			tryEveryOperation(t, browserPath, storeURLs()[store](t), store == "sqlite")
		})
	}
}

func tryEveryOperation(t *testing.T, browserPath, databaseURL string, picture bool) {
	s := startService(t, databaseURL, nil)
	token := s.token(t, jwt.MapClaims{"scope": "plants:read plants:write"})
	b := referencetest.Start(t, browserPath, s.api)
	// The page opened by the link of an operation on one plant, as a shared
	// link or a reload opens it: Swagger UI resolves that operation as the
	// page loads, where it once lost the path's {id}.
	b.OpenOperation(t, referencetest.Operation{Tag: "plants", ID: "getPlant"})
	b.ExpectOperations(t, referencetest.DocumentedOperations(t))
	b.Authorize(t, token)

	tried := map[string]bool{}
	// try sends the operation id from the page with params, body and the
	// request id rid, and checks the status the page shows and the access
	// line of the request: its method, its path and its status.
	try := func(tag, id, rid string, params map[string]string, body, method, path string, status int) referencetest.Answer {
		t.Helper()
		tried[id] = true
		if params == nil {
			params = map[string]string{}
		}
		params["X-Request-ID"] = rid
		a := b.TryIt(t, referencetest.Operation{Tag: tag, ID: id}, params, body)
		if a.Status != status {
			t.Fatalf("%s from the page: the page shows %d %v, want %d", id, a.Status, a.Body, status)
		}
		// The browser may have revalidated a read from its cache: the
		// service answered 304, the page shows the cached answer.
		line := accessLine(t, s, rid)
		revalidated := line.Status == 304 && (method == "GET" || method == "HEAD")
		if line.Method != method || line.Path != path || (line.Status != status && !revalidated) || line.Subject != "alice" {
			t.Fatalf("%s from the page: the access line is %+v, want %s %s answered %d for alice", id, line, method, path, status)
		}
		return a
	}

	create := try("plants", "createPlant", "reference-page-create", nil,
		`{"id": 4242, "name": "Pilea peperomioides", "tag": "from the browser"}`, "POST", "/plants", 200)
	if plant, _ := create.Body.(map[string]any); plant["name"] != "Pilea peperomioides" || plant["tag"] != "from the browser" {
		t.Fatalf("create from the page: %v", create.Body)
	}
	// The picture in README shows this answer: it must still be what the
	// page shows, or be taken again (make screenshot).
	createOp := referencetest.Operation{Tag: "plants", ID: "createPlant"}
	shown := b.AnswerText(t, createOp)
	if path := os.Getenv(screenshotEnv); path != "" && picture {
		b.ShowAnswer(t, createOp)
		b.SaveScreenshot(t, path)
		if err := os.WriteFile(answerText(path), []byte(shown), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if pictured, err := os.ReadFile(screenshotText); err != nil {
		t.Errorf("the text of docs/api-reference.png: %v", err)
	} else if string(pictured) != shown {
		t.Errorf("docs/api-reference.png shows another page than the one served now: run `make screenshot` and commit both files\n%s",
			firstLineDiff(string(pictured), shown))
	}
	// The plant is stored: the same content replays, other content conflicts.
	s.create(t, `{"id":4242,"name":"Pilea peperomioides","tag":"from the browser"}`).expect(t, 200, "")
	s.create(t, `{"id":4242,"name":"another"}`).expectError(t, 409, "40901")

	// Read it, with and without its body, and find it in a list filtered
	// by its tag.
	read := try("plants", "getPlant", "reference-page-get", map[string]string{"id": "4242"}, "", "GET", "/plants/4242", 200)
	if plant, _ := read.Body.(map[string]any); plant["id"] != float64(4242) || plant["name"] != "Pilea peperomioides" || read.Header["etag"] == "" {
		t.Fatalf("read from the page: %v %v", read.Body, read.Header)
	}
	head := try("plants", "headPlant", "reference-page-head", map[string]string{"id": "4242"}, "", "HEAD", "/plants/4242", 200)
	if head.Body != nil || head.Header["etag"] != read.Header["etag"] {
		t.Fatalf("HEAD from the page: %v %v, want no body and the ETag %s", head.Body, head.Header, read.Header["etag"])
	}
	list := try("plants", "listPlants", "reference-page-list", map[string]string{"tag": "from the browser", "limit": "10"}, "", "GET", "/plants", 200)
	if page, _ := list.Body.([]any); len(page) != 1 || page[0].(map[string]any)["id"] != float64(4242) {
		t.Fatalf("list from the page: %v", list.Body)
	}
	try("plants", "headListPlants", "reference-page-head-list", map[string]string{"tag": "from the browser"}, "", "HEAD", "/plants", 200)

	// Rename it and remove its tag with a merge patch, on the condition
	// that it is still as read.
	changed := try("plants", "changePlant", "reference-page-change", map[string]string{"id": "4242", "If-Match": read.Header["etag"]},
		`{"name": "Pilea (renamed)", "tag": null}`, "PATCH", "/plants/4242", 200)
	if plant, _ := changed.Body.(map[string]any); plant["name"] != "Pilea (renamed)" || plant["tag"] != nil {
		t.Fatalf("change from the page: %v", changed.Body)
	}
	s.call(t, "GET", "/plants/4242").expect(t, 200, `{"id":4242,"name":"Pilea (renamed)"}`)

	// The feed, a page of one event, then the page its Link names.
	first := try("events", "listEvents", "reference-page-events", map[string]string{"limit": "1"}, "", "GET", "/events", 200)
	next := regexp.MustCompile(`[?&]after=([A-Za-z0-9_-]+)`).FindStringSubmatch(first.Header["link"])
	if eventTypes(first.Body) != "plant.created 4242" || next == nil {
		t.Fatalf("the feed's first page from the page: %v, Link %q", first.Body, first.Header["link"])
	}
	second := try("events", "listEvents", "reference-page-events-next", map[string]string{"limit": "1", "after": next[1]}, "", "GET", "/events", 200)
	if eventTypes(second.Body) != "plant.changed 4242" {
		t.Fatalf("the feed's next page from the page: %v", second.Body)
	}
	try("events", "headListEvents", "reference-page-head-events", map[string]string{"limit": "1"}, "", "HEAD", "/events", 200)

	try("plants", "deletePlant", "reference-page-delete", map[string]string{"id": "4242", "If-Match": changed.Header["etag"]}, "", "DELETE", "/plants/4242", 204)
	s.call(t, "GET", "/plants/4242").expectError(t, 404, "40402")

	for _, op := range referencetest.Executable(t) {
		if op.Tag != "documentation" && !tried[op.ID] {
			t.Errorf("the test sends no %s from the page", op.ID)
		}
	}
	for _, line := range accessLines(s) {
		if strings.ContainsAny(line.Path, "{}%") {
			t.Errorf("the service was sent the path %q", line.Path)
		}
	}
	b.ExpectCleanRun(t)
}

// eventTypes is "type plant-id" of each event of a feed page the page
// showed, space-separated.
func eventTypes(page any) string {
	events, _ := page.([]any)
	var s []string
	for _, e := range events {
		e, _ := e.(map[string]any)
		plant, _ := e["plant"].(map[string]any)
		s = append(s, fmt.Sprint(e["type"], " ", plant["id"]))
	}
	return strings.Join(s, " ")
}

// access is what an access line of the service says of a request.
type access struct {
	Msg       string `json:"msg"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Status    int    `json:"status"`
	RequestID string `json:"request_id"`
	Subject   string `json:"subject"`
}

// accessLines are the access lines the service has written so far.
func accessLines(s *service) []access {
	var lines []access
	for l := range strings.SplitSeq(s.logs.String(), "\n") {
		var a access
		if json.Unmarshal([]byte(l), &a) == nil && a.Msg == "request" {
			lines = append(lines, a)
		}
	}
	return lines
}

// accessLine waits for the access line of the request rid: it is written
// once the answer is sent, so after the page may show it.
func accessLine(t *testing.T, s *service, rid string) access {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, a := range accessLines(s) {
			if a.RequestID == rid {
				return a
			}
		}
	}
	t.Fatalf("no access line of the request %s in:\n%s", rid, s.logs.String())
	return access{}
}

// firstLineDiff says where two texts first differ, line by line.
func firstLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d: the picture's text has %q, the page %q", i+1, wl, gl)
		}
	}
	return "no line differs"
}
