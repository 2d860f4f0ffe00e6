package main

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/plantstore/plantstore/docs"
)

// documentedAssets is the enum of the asset parameter of GET /docs/{asset}.
func documentedAssets(t *testing.T) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Paths.Value("/docs/{asset}").Get
	var names []string
	for _, p := range op.Parameters {
		if p.Value.Name == "asset" {
			for _, v := range p.Value.Schema.Value.Enum {
				names = append(names, v.(string))
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("GET /docs/{asset} lists no asset")
	}
	return names
}

// The reference page and its files answer as the document says, through the
// same middleware as every route: request id, access line, contract.
func TestReferencePageIsServedAsDocumented(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), nil)
	page := s.do(t, http.MethodGet, "/docs", nil, nil)
	page.expect(t, 200, "")
	if csp := page.header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'; script-src 'self';") {
		t.Fatalf("Content-Security-Policy %q", csp)
	}

	documented := documentedAssets(t)
	links := regexp.MustCompile(`(?:src|href)="docs/([^"?]+)\?v=[0-9a-f]+"`).FindAllStringSubmatch(page.body, -1)
	if len(links) == 0 {
		t.Fatalf("the page links no file of its own:\n%s", page.body)
	}
	for _, l := range links {
		if !slices.Contains(documented, l[1]) {
			t.Errorf("the page uses %s, which the document does not list", l[1])
		}
	}
	for _, name := range documented {
		r := s.do(t, http.MethodGet, "/docs/"+name, map[string]string{"X-Request-ID": "asset-" + name}, nil)
		r.expect(t, 200, "")
		if !strings.Contains(s.logs.String(), `"route":"/docs/`+name+`","path":"/docs/`+name+`","status":200`) {
			t.Errorf("no access line for /docs/%s", name)
		}
	}
	s.do(t, http.MethodGet, "/docs/nope.js", nil, nil).expectError(t, 404, "40401")
	s.do(t, http.MethodGet, "/docs/", nil, nil).expectError(t, 404, "40401")
	s.do(t, http.MethodPost, "/docs", nil, nil).expectError(t, 405, "40501")

	// HEAD answers as GET does, headers only, on every GET route.
	for _, path := range []string{"/docs", "/docs/reference.js", "/openapi.yaml", "/plants", "/plants/1"} {
		get := s.call(t, http.MethodGet, path)
		head := s.call(t, http.MethodHead, path)
		if head.status != get.status || head.body != "" || head.header.Get("Content-Type") != get.header.Get("Content-Type") ||
			head.header.Get("Content-Length") != get.header.Get("Content-Length") {
			t.Errorf("HEAD %s: %d %q %v; want GET's %d and headers %v, no body", path, head.status, head.body, head.header, get.status, get.header)
		}
	}
}
