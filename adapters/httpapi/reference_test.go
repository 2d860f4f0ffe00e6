package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"

	"github.com/plantstore/plantstore/docs"
)

// fetchReference sends one request through the API and checks the answer
// against the document.
func fetchReference(t *testing.T, api *API, method, target string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return record(t, api, req)
}

func TestReferencePageLinksOnlyItsOwnFiles(t *testing.T) {
	api := newTestAPI(t, seededStore(t), DefaultMaxBodyBytes)
	rec := fetchReference(t, api, http.MethodGet, "/docs", nil)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /docs: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	for k, want := range map[string]string{
		"Content-Security-Policy": referenceCSP,
		"X-Content-Type-Options":  "nosniff",
		"Cache-Control":           "no-cache",
	} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if rec.Header().Get("X-Request-ID") == "" {
		t.Error("no X-Request-ID")
	}
	for _, bad := range []string{"//", "http:", "https:", "<script>", "<style", " style=", " on"} {
		if strings.Contains(rec.Body.String(), bad) {
			t.Errorf("the page holds %q: another origin or inline code", bad)
		}
	}
	page := api.reference
	linked := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(rec.Body.String(), -1) {
		if m[1] == "openapi.yaml" {
			continue
		}
		name, ok := strings.CutPrefix(m[1], "docs/")
		name, version, _ := strings.Cut(name, "?v=")
		if !ok || version != page.version {
			t.Errorf("the page links %q, want docs/NAME?v=%s", m[1], page.version)
		}
		linked[name] = true
	}
	for _, asset := range page.assets {
		if !linked[asset.name] {
			t.Errorf("asset %s is served but the page does not use it", asset.name)
		}
		delete(linked, asset.name)
	}
	if len(linked) > 0 {
		t.Errorf("the page links files that are not served: %v", linked)
	}
}

func TestReferenceAssets(t *testing.T) {
	api := newTestAPI(t, seededStore(t), DefaultMaxBodyBytes)
	version := api.reference.version
	for _, asset := range api.reference.assets {
		t.Run(asset.name, func(t *testing.T) {
			plain := asset.body
			if asset.gzipped {
				zr, err := gzip.NewReader(bytes.NewReader(asset.body))
				if err != nil {
					t.Fatal(err)
				}
				if plain, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			for _, tc := range []struct {
				name, query, acceptEncoding, cache string
				gzip                               bool
			}{
				{"current version, gzip", "?v=" + version, "gzip, deflate, br", immutable, asset.gzipped},
				{"no version, gzip", "", "br;q=1, gzip;q=0.5", "no-cache", asset.gzipped},
				{"other version, no gzip", "?v=0123", "", "no-cache", false},
				{"gzip refused", "?v=" + version, "gzip;q=0, *", immutable, false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					rec := fetchReference(t, api, http.MethodGet, "/docs/"+asset.name+tc.query, map[string]string{"Accept-Encoding": tc.acceptEncoding})
					h := rec.Header()
					if rec.Code != 200 || h.Get("Content-Type") != asset.contentType || h.Get("Cache-Control") != tc.cache ||
						h.Get("Content-Security-Policy") != referenceCSP || h.Get("X-Request-ID") == "" {
						t.Fatalf("%d %v", rec.Code, h)
					}
					body := rec.Body.Bytes()
					if tc.gzip {
						if h.Get("Content-Encoding") != "gzip" {
							t.Fatalf("Content-Encoding %q, want gzip", h.Get("Content-Encoding"))
						}
						zr, err := gzip.NewReader(rec.Body)
						if err != nil {
							t.Fatal(err)
						}
						body, _ = io.ReadAll(zr)
					} else if h.Get("Content-Encoding") != "" {
						t.Fatalf("Content-Encoding %q, want none", h.Get("Content-Encoding"))
					}
					if !bytes.Equal(body, plain) {
						t.Fatalf("body differs from the embedded file (%d bytes, want %d)", len(body), len(plain))
					}
					if asset.gzipped && h.Get("Vary") != "Accept-Encoding" {
						t.Fatalf("Vary %q", h.Get("Vary"))
					}
				})
			}
		})
	}
}

// Paths under /docs that are not the page's files are unknown routes, and
// the page's routes answer HEAD as GET and other methods as every GET route
// does.
func TestReferenceUnknownPathsAndMethods(t *testing.T) {
	api := newTestAPI(t, seededStore(t), DefaultMaxBodyBytes)
	for _, path := range []string{"/docs/", "/docs/nope.js", "/docs/swagger-ui.js", "/docs/oauth2-redirect.html",
		"/docs/reference/index.html", "/docs/swagger-ui.css/x", "/docs/../docs/x", "/docs/swagger-ui.css.gz", "/docs.html"} {
		rec := fetchReference(t, api, http.MethodGet, path, nil)
		if rec.Code != 404 || rec.Body.String() != `{"error":40401,"message":"no such route"}` || rec.Header().Get("X-Request-ID") == "" {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	for _, path := range []string{"/docs", "/docs/reference.js", "/openapi.yaml"} {
		get, head := fetchReference(t, api, http.MethodGet, path, nil), fetchReference(t, api, http.MethodHead, path, nil)
		if head.Code != 200 || head.Header().Get("Content-Type") != get.Header().Get("Content-Type") ||
			head.Header().Get("Content-Length") != get.Header().Get("Content-Length") {
			t.Errorf("HEAD %s: %d %v; want GET's headers %v", path, head.Code, head.Header(), get.Header())
		}
		for _, method := range []string{http.MethodPost, http.MethodDelete} {
			rec := fetchReference(t, api, method, path, nil)
			if rec.Code != 405 || rec.Header().Get("Allow") != allowOf(t, api, path) || !strings.HasPrefix(rec.Body.String(), `{"error":40501,`) {
				t.Errorf("%s %s: %d Allow %q %s", method, path, rec.Code, rec.Header().Get("Allow"), rec.Body)
			}
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"":                    false,
		"gzip":                true,
		"GZIP":                true,
		"deflate, gzip;q=1.0": true,
		"gzip; q=0.001":       true,
		"gzip;q=0":            false,
		"gzip;q=0.000":        false,
		"gzip;q=x":            false,
		"*":                   true,
		"*;q=0":               false,
		"gzip;q=0, *":         false,
		"*;q=0, gzip":         true,
		"br, identity":        false,
		"x-gzip":              false,
	} {
		if got := acceptsGzip([]string{header}); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

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
	s := startServer(t)
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
		// The line is written once the answer is sent, after the client has it.
		assert.Eventually(t, func() bool {
			return strings.Contains(s.logs.String(), `"route":"/docs/`+name+`","path":"/docs/`+name+`","status":200`)
		}, time.Minute, time.Millisecond, "no access line for /docs/%s", name)
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

// The page and each file are documented with the very Content-Type they are
// served with, charset included, so that a tool comparing media types
// exactly (Dredd does) finds them.
func TestReferenceContentTypesAreDocumentedExactly(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	documented := func(path string) openapi3.Content {
		return doc.Paths.Value(path).Get.Responses.Status(200).Value.Content
	}
	api := newTestAPI(t, seededStore(t), DefaultMaxBodyBytes)
	if ct := fetchReference(t, api, http.MethodGet, "/docs", nil).Header().Get("Content-Type"); documented("/docs")[ct] == nil {
		t.Errorf("GET /docs is served as %q, which its 200 does not list", ct)
	}
	for _, asset := range api.reference.assets {
		if documented("/docs/{asset}")[asset.contentType] == nil {
			t.Errorf("%s is served as %q, which GET /docs/{asset} does not list", asset.name, asset.contentType)
		}
	}
}
