package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/docs"
)

// A traced request continues the caller's W3C trace: its server span is the
// child of the traceparent it sent, named after its route, the use case's
// span is the server span's child, and the access line carries the trace id.
func TestARequestContinuesTheCallersTrace(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	var logs bytes.Buffer
	deps := useCases(memory.New(), everyScope)
	deps.Verifier = staticVerifier{application.Principal{Subject: "test", Scopes: []string{everyScope.Read, everyScope.Write}}}
	deps.Log = slog.New(slog.NewJSONHandler(&logs, nil))
	deps.Tracing = tp
	api, err := New(Config{OpenAPI: docs.OpenAPI}, deps)
	if err != nil {
		t.Fatal(err)
	}
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req := httptest.NewRequest(http.MethodPost, "/plants", strings.NewReader(`{"id":7,"name":"Fern"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer x")
	req.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	w := httptest.NewRecorder()
	api.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	spans := recorder.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans ended; want the use case's and the request's", len(spans))
	}
	useCase, server := spans[0], spans[1]
	if server.Name() != "POST /plants" || server.SpanKind() != trace.SpanKindServer {
		t.Errorf("request span %q of kind %v; want POST /plants, server", server.Name(), server.SpanKind())
	}
	if got := server.Parent(); got.TraceID().String() != callerTrace || got.SpanID().String() != callerSpan || !got.IsRemote() {
		t.Errorf("request span's parent is %v; want the caller's span", got)
	}
	if useCase.Name() != "CreatePlant" || useCase.Parent().SpanID() != server.SpanContext().SpanID() {
		t.Errorf("use case span %q with parent %v; want CreatePlant, child of the request's %v",
			useCase.Name(), useCase.Parent().SpanID(), server.SpanContext().SpanID())
	}
	if !strings.Contains(logs.String(), `"trace_id":"`+callerTrace+`"`) {
		t.Errorf("access line %s lacks the trace id", logs.String())
	}
}

// A method HTTP does not define names its span HTTP, as OpenTelemetry's
// conventions ask, so that span names stay a closed set whatever clients
// send; the method itself is an attribute.
func TestAnUnknownMethodsSpanIsNamedHTTP(t *testing.T) {
	api, recorder := tracedAPI(t, memory.New())
	for _, method := range []string{"FOO", "BAR1", http.MethodGet} {
		api.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/plants", nil))
	}
	var names, methods []string
	for _, s := range recorder.Ended() {
		if s.SpanKind() != trace.SpanKindServer {
			continue
		}
		names = append(names, s.Name())
		for _, a := range s.Attributes() {
			if a.Key == "http.request.method" || a.Key == "http.request.method_original" {
				methods = append(methods, string(a.Key)+"="+a.Value.AsString())
			}
		}
	}
	wantNames := []string{"HTTP /plants", "HTTP /plants", "GET /plants"}
	wantMethods := []string{"http.request.method_original=FOO", "http.request.method=_OTHER", "http.request.method_original=BAR1", "http.request.method=_OTHER", "http.request.method=GET"}
	if fmt.Sprint(names) != fmt.Sprint(wantNames) || fmt.Sprint(methods) != fmt.Sprint(wantMethods) {
		t.Fatalf("spans %q with %q; want %q with %q", names, methods, wantNames, wantMethods)
	}
}

// A use case whose store is unavailable ends its span failed, as the
// request's; one the client's request made refuse (a plant not found) is
// an answer, and its span is not failed.
func TestAUseCaseSpanFailsWithTheStore(t *testing.T) {
	store := memory.New()
	api, recorder := tracedAPI(t, store)
	get := func() {
		r := httptest.NewRequest(http.MethodGet, "/plants/7", nil)
		r.Header.Set("Authorization", "Bearer x")
		api.ServeHTTP(httptest.NewRecorder(), r)
	}
	get() // 404
	store.Inject(func() error { return fmt.Errorf("pool: %w", application.ErrUnavailable) })
	get() // 503
	var got []string
	for _, s := range recorder.Ended() {
		got = append(got, s.Name()+" "+s.Status().Code.String())
	}
	want := []string{"GetPlant Unset", "GET /plants/{id} Unset", "GetPlant Error", "GET /plants/{id} Error"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("spans %q; want %q", got, want)
	}
}

// Without tracing, the access line says nothing of traces, even when the
// caller sent a traceparent.
func TestAnUntracedRequestLogsNoTraceID(t *testing.T) {
	for name, tp := range map[string]trace.TracerProvider{"none": nil, "no-op": noop.NewTracerProvider()} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			deps := useCases(memory.New(), everyScope)
			deps.Verifier = staticVerifier{application.Principal{Subject: "test", Scopes: []string{everyScope.Write}}}
			deps.Log = slog.New(slog.NewJSONHandler(&logs, nil))
			deps.Tracing = tp
			api, err := New(Config{}, deps)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, "/plants", strings.NewReader(`{"id":7,"name":"Fern"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			api.ServeHTTP(httptest.NewRecorder(), req)
			if strings.Contains(logs.String(), "trace_id") {
				t.Errorf("access line %s has a trace id", logs.String())
			}
		})
	}
}

// BenchmarkRequestPathTracing is BenchmarkRequestPath's create (HS256) with
// tracing off (a no-op provider, as the service wires it), and on, sampling
// every request or 1 % of them, exporting to nowhere in batches as the
// service does to its collector.
func BenchmarkRequestPathTracing(b *testing.B) {
	keys := jwttest.New(b)
	claims := jwt.MapClaims{"sub": "bench", "scope": "plants:write", "exp": time.Now().Add(time.Hour).Unix()}
	body := []byte(`{"id":12345,"name":"Monstera deliciosa","tag":"tropical"}`)
	exporter := tracetest.NewNoopExporter()
	for _, c := range []struct {
		name string
		tp   trace.TracerProvider
	}{
		{"off", noop.NewTracerProvider()},
		{"always", sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithSampler(sdktrace.AlwaysSample()))},
		{"ratio-0.01", sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01))))},
	} {
		store := memory.New()
		deps := useCases(store, everyScope)
		deps.Verifier, deps.Log, deps.Tracing = keys.Verifier(b), slog.New(slog.NewJSONHandler(io.Discard, nil)), c.tp
		api, err := New(Config{OpenAPI: docs.OpenAPI}, deps)
		if err != nil {
			b.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/plants", nil)
		req.Header.Set("Authorization", "Bearer "+keys.Sign(b, jwt.SigningMethodHS256, keys.Secret, claims))
		req.Header.Set("Content-Type", "application/json")
		b.Run(c.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				r := *req
				r.Body = io.NopCloser(bytes.NewReader(body))
				clear(w.h)
				api.ServeHTTP(w, &r)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// tracedAPI is the API on store, traced into the recorder it returns, for
// a reader whatever token it sends.
func tracedAPI(t *testing.T, store *memory.Store) (*API, *tracetest.SpanRecorder) {
	t.Helper()
	recorder := tracetest.NewSpanRecorder()
	deps := useCases(store, everyScope)
	deps.Verifier = staticVerifier{application.Principal{Subject: "test", Scopes: []string{everyScope.Read}}}
	deps.Log = slog.New(slog.DiscardHandler)
	deps.Tracing = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	api, err := New(Config{OpenAPI: docs.OpenAPI}, deps)
	if err != nil {
		t.Fatal(err)
	}
	return api, recorder
}
