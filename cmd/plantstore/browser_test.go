package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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

// The API reference page in headless Chromium: it loads with no console
// error and no request to another host, lists every operation of the
// document, and with a token pasted in its Authorize dialog it creates,
// reads, lists, changes and deletes a plant through "Try it out".
func TestReferencePageInABrowser(t *testing.T) {
	browserPath := referencetest.Find(t)
	s := startService(t, storeURLs()["sqlite"](t), nil)
	token := s.token(t, jwt.MapClaims{"scope": "plants:read plants:write"})
	b := referencetest.Start(t, browserPath, s.api)

	b.Open(t, "/docs")
	b.ExpectOperations(t, referencetest.DocumentedOperations(t))
	b.Authorize(t, token)

	create := referencetest.Operation{Tag: "plants", ID: "createPlant"}
	status, body := b.TryIt(t, create, map[string]string{"X-Request-ID": "reference-page-create"},
		`{"id": 4242, "name": "Pilea peperomioides", "tag": "from the browser"}`)
	if plant, _ := body.(map[string]any); status != 200 || plant["name"] != "Pilea peperomioides" || plant["tag"] != "from the browser" {
		t.Fatalf("create from the page: %d %v", status, body)
	}
	// It reached the service with the token and the parameter typed in the
	// page, and the plant is stored: the same content replays, other content
	// conflicts.
	created := regexp.MustCompile(`"route":"/plants","path":"/plants","status":200,[^\n]*"request_id":"reference-page-create","subject":"alice"`)
	if !created.MatchString(s.logs.String()) {
		t.Errorf("no access line of the page's create in:\n%s", s.logs.String())
	}
	s.create(t, `{"id":4242,"name":"Pilea peperomioides","tag":"from the browser"}`).expect(t, 200, "")
	s.create(t, `{"id":4242,"name":"another"}`).expectError(t, 409, "40901")

	// Read it, find it in a list filtered by its tag, then delete it.
	status, body = b.TryIt(t, referencetest.Operation{Tag: "plants", ID: "getPlant"}, map[string]string{"id": "4242"}, "")
	if plant, _ := body.(map[string]any); status != 200 || plant["id"] != float64(4242) || plant["name"] != "Pilea peperomioides" {
		t.Fatalf("read from the page: %d %v", status, body)
	}
	status, body = b.TryIt(t, referencetest.Operation{Tag: "plants", ID: "listPlants"}, map[string]string{"tag": "from the browser"}, "")
	if page, _ := body.([]any); status != 200 || len(page) != 1 || page[0].(map[string]any)["id"] != float64(4242) {
		t.Fatalf("list from the page: %d %v", status, body)
	}
	// Rename it and remove its tag with a merge patch.
	status, body = b.TryIt(t, referencetest.Operation{Tag: "plants", ID: "changePlant"}, map[string]string{"id": "4242"},
		`{"name": "Pilea (renamed)", "tag": null}`)
	if plant, _ := body.(map[string]any); status != 200 || plant["name"] != "Pilea (renamed)" || plant["tag"] != nil {
		t.Fatalf("change from the page: %d %v", status, body)
	}
	s.call(t, "GET", "/plants/4242").expect(t, 200, `{"id":4242,"name":"Pilea (renamed)"}`)
	// The picture in README shows this answer: it must still be what the
	// page shows, or be taken again (make screenshot).
	shown := b.AnswerText(t, create)
	if path := os.Getenv(screenshotEnv); path != "" {
		b.ShowAnswer(t, create)
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
	if status, _ = b.TryIt(t, referencetest.Operation{Tag: "plants", ID: "deletePlant"}, map[string]string{"id": "4242"}, ""); status != 204 {
		t.Fatalf("delete from the page: %d", status)
	}
	s.call(t, "GET", "/plants/4242").expectError(t, 404, "40402")

	b.ExpectCleanRun(t)
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
