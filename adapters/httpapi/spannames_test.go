package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/docs"
)

// A request's span is named after its method and route, as its access line
// names them, and a path no route matches after its method and "unmatched";
// docs/operations.md names the spans so.
func TestRequestSpansAreNamedAsTheOperationsGuideSays(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	deps := useCases(seededStore(t), everyScope)
	deps.Verifier = staticVerifier{application.Principal{Subject: "test", Scopes: []string{everyScope.Read, everyScope.Write}}}
	deps.Log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	deps.Tracing = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	api, err := New(Config{OpenAPI: docs.OpenAPI}, deps)
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path, span string
	}{
		{http.MethodGet, "/plants/1", "GET /plants/{id}"},
		{http.MethodGet, "/no/such/route", "GET unmatched"},
	} {
		req := httptest.NewRequest(c.method, c.path, nil)
		req.Header.Set("Authorization", "Bearer x")
		record(t, api, req)
		spans := recorder.Ended()
		if got := spans[len(spans)-1].Name(); got != c.span {
			t.Errorf("%s %s: span %q; want %q", c.method, c.path, got, c.span)
		}
		if !strings.Contains(string(guide), "`"+c.span+"`") {
			t.Errorf("docs/operations.md does not name the span `%s`", c.span)
		}
	}
}
