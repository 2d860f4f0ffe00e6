package httpapi

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// routed is one route of the router: a method on a chi pattern.
type routed struct{ method, pattern string }

// routeTable is every route of api's router.
func routeTable(t testing.TB, api *API) []routed {
	t.Helper()
	var routes []routed
	err := chi.Walk(api.router, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes = append(routes, routed{method, pattern})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return routes
}

// samplePath is a path that pattern matches: each parameter is "1", an id
// that parses, and the one value any route's parameter needs to be matched.
func samplePath(pattern string) string {
	return routeParam.ReplaceAllString(pattern, "1")
}

var routeParam = regexp.MustCompile(`\{[^}]*\}`)

// allowOf is the Allow header that the router gives path: the methods it
// routes there. Tests that check Allow take it from here, so that a method
// added to a path changes none of them; TestRoutesAreTheDocumentsOperations
// is the one test that holds these methods to the OpenAPI document.
func allowOf(t testing.TB, api *API, path string) string {
	t.Helper()
	allowed, _ := allowedMethods(api.router, httptest.NewRequest(http.MethodGet, path, nil))
	return allowed
}

// The router and the OpenAPI document are held to each other here: every
// route is an operation of the document, every operation of the document is
// routed, and on every route the served API answers a method it does not
// route with an Allow that lists exactly the document's methods for the path.
func TestRoutesAreTheDocumentsOperations(t *testing.T) {
	s := startServer(t)
	documented := s.contract.Operations()
	served := map[string][]string{}  // template → methods routed
	templates := map[string]string{} // sample path → template
	for _, r := range routeTable(t, s.api) {
		path := samplePath(r.pattern)
		template, ok := s.contract.Route(r.method, path)
		if !ok {
			t.Errorf("%s %s is routed, but the document has no such operation", r.method, r.pattern)
			continue
		}
		served[template] = append(served[template], r.method)
		templates[path] = template
	}
	for template, methods := range documented {
		for _, m := range methods {
			if !slices.Contains(served[template], m) {
				t.Errorf("%s %s is in the document, but no route serves it", m, template)
			}
		}
	}
	for path, template := range templates {
		r := s.do(t, "FOO", path, nil, nil)
		r.expectError(t, http.StatusMethodNotAllowed, "40501")
		if got, want := r.header.Get("Allow"), allowHeader(documented[template]); got != want {
			t.Errorf("FOO %s: Allow %q; the document has %q for %s", path, got, want, template)
		}
	}
}

// allowHeader is methods as an Allow header lists them, in the order of
// candidateMethods; a method not among those comes last, so that the router,
// which offers only those, fails to match it.
func allowHeader(methods []string) string {
	ordered := slices.Clone(methods)
	rank := func(m string) int {
		if i := slices.Index(candidateMethods, m); i >= 0 {
			return i
		}
		return len(candidateMethods)
	}
	slices.SortStableFunc(ordered, func(a, b string) int { return rank(a) - rank(b) })
	return strings.Join(ordered, ", ")
}
