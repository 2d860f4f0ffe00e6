package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/plantstore/plantstore/docs"
)

func TestRequestIDs(t *testing.T) {
	s := startServer(t)
	r := s.do(t, "GET", "/openapi.yaml", map[string]string{"X-Request-ID": "client-42.a_b:c"}, nil)
	if got := r.header.Get("X-Request-ID"); got != "client-42.a_b:c" {
		t.Fatalf("a sane client id must be echoed, got %q", got)
	}
	for _, hostile := range []string{strings.Repeat("a", 500), "a b", "<script>", "id\"quote", "ünïcode"} {
		r := s.do(t, "GET", "/nope", map[string]string{"X-Request-ID": hostile}, nil)
		if got := r.header.Get("X-Request-ID"); got == hostile || got == "" {
			t.Fatalf("hostile id %q must be replaced, got %q", hostile, got)
		}
	}
	a := s.do(t, "GET", "/nope", nil, nil).header.Get("X-Request-ID")
	b := s.do(t, "GET", "/nope", nil, nil).header.Get("X-Request-ID")
	if a == "" || a == b {
		t.Fatalf("new ids must be unique: %q %q", a, b)
	}
}

func TestOpenAPIDocumentIsServed(t *testing.T) {
	s := startServer(t)
	r := s.do(t, "GET", "/openapi.yaml", nil, nil)
	if r.status != 200 || r.body != string(docs.OpenAPI) {
		t.Fatalf("GET /openapi.yaml: %d, %d bytes", r.status, len(r.body))
	}
}

func TestAccessLogCarriesRequestIDAndSubjectButNoToken(t *testing.T) {
	s := startServer(t)
	tok := s.token(t, jwt.MapClaims{"sub": "gardener-7"})
	s.do(t, "POST", "/plants", map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json", "X-Request-ID": "req-123"},
		[]byte(`{"id":5,"name":"Secret body content"}`)).expect(t, 200, "")
	var line map[string]any
	if l := s.accessLine(t, "req-123"); json.Unmarshal([]byte(l), &line) != nil {
		t.Fatalf("log line is not JSON: %q", l)
	}
	for k, want := range map[string]any{"method": "POST", "route": "/plants", "path": "/plants", "status": float64(200), "subject": "gardener-7"} {
		if line[k] != want {
			t.Errorf("access line %s = %v, want %v", k, line[k], want)
		}
	}
	for _, k := range []string{"duration", "bytes"} {
		if _, ok := line[k]; !ok {
			t.Errorf("access line lacks %s", k)
		}
	}
	if logs := s.logs.String(); strings.Contains(logs, tok) || strings.Contains(logs, strings.Split(tok, ".")[2]) || strings.Contains(logs, "Secret body content") || strings.Contains(logs, string(s.keys.Secret)) {
		t.Fatal("the logs carry a token, a secret or a request body")
	}
}

// A 405 is on a route that exists: its access line names the route's
// pattern, as every answer of that route does; a 404 has none.
func TestAccessLogNamesTheRouteOfA405(t *testing.T) {
	s := startServer(t)
	s.do(t, "PUT", "/plants/12", map[string]string{"X-Request-ID": "put-12"}, nil).expectError(t, 405, "40501")
	s.do(t, "PATCH", "/plants", map[string]string{"X-Request-ID": "patch-all"}, nil).expectError(t, 405, "40501")
	s.do(t, "GET", "/plant", map[string]string{"X-Request-ID": "no-route"}, nil).expectError(t, 404, "40401")
	for id, route := range map[string]string{"put-12": "/plants/{id}", "patch-all": "/plants", "no-route": "unmatched"} {
		if want := `"route":"` + route + `"`; !strings.Contains(s.accessLine(t, id), want) {
			t.Errorf("access line of %s lacks %s", id, want)
		}
	}
}

// The API counts requests by route and status, creates by outcome and
// refusals of authentication by reason.
func TestMetricsCountRequestsAndOutcomes(t *testing.T) {
	s := startServer(t)
	s.create(t, `{"id":1,"name":"a"}`).expect(t, 200, "")
	s.create(t, `{"id":1,"name":"a"}`).expect(t, 200, "")
	s.create(t, `{"id":1,"name":"b"}`).expectError(t, 409, "40901")
	s.do(t, "POST", "/plants", nil, nil).expectError(t, 401, "40101")
	w := httptest.NewRecorder()
	promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	m := w.Body.String()
	for _, want := range []string{
		`plantstore_http_requests_total{method="POST",route="/plants",status="200"} 2`,
		`plantstore_plant_operations_total{operation="create",outcome="created"} 1`,
		`plantstore_plant_operations_total{operation="create",outcome="replayed"} 1`,
		`plantstore_plant_operations_total{operation="create",outcome="conflict"} 1`,
		`plantstore_auth_failures_total{reason="missing"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
