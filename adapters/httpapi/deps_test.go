package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/docs"
)

// These tests find the use cases of Deps by reflection (useCaseFields), so
// that a use case added to Deps is held to them with no edit here.

// newAPIFrom builds the API from deps' use cases with a verifier that grants
// every scope of everyScope.
func newAPIFrom(t testing.TB, deps Deps) *API {
	t.Helper()
	deps.Verifier = staticVerifier{application.Principal{Subject: "test", Scopes: []string{everyScope.Read, everyScope.Write}}}
	deps.Log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	api, err := New(Config{OpenAPI: docs.OpenAPI}, deps)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// useCase is the use case field f of d, settable.
func useCase(d *Deps, f reflect.StructField) reflect.Value {
	return reflect.ValueOf(d).Elem().FieldByIndex(f.Index)
}

// Every field of Deps is a use case, found by its type, or one of the
// dependencies that are not: a use case typed otherwise would escape New's
// check and the tests of routes and spans.
func TestDepsHoldUseCasesAndKnownDependencies(t *testing.T) {
	others := []string{"Verifier", "Log", "Metrics", "Tracing"}
	deps := reflect.TypeFor[Deps]()
	for i := range deps.NumField() {
		f := deps.Field(i)
		isUseCase := slices.ContainsFunc(useCaseFields, func(u reflect.StructField) bool { return u.Name == f.Name })
		switch {
		case isUseCase && !f.Type.Implements(reflect.TypeFor[authorizer]()):
			t.Errorf("Deps.%s has no Authorize: every use case is admitted by its own scope check", f.Name)
		case !isUseCase && !slices.Contains(others, f.Name):
			t.Errorf("Deps.%s is %s, neither a port this package declares nor a known dependency", f.Name, f.Type)
		}
	}
	if len(useCaseFields) == 0 {
		t.Fatal("Deps has no use case")
	}
}

// NewDeps gives every use case of Deps, so that whoever builds the API
// with it serves every operation, one added later included: a use case
// field without its line in NewDeps fails here, by name.
func TestNewDepsGivesEveryUseCase(t *testing.T) {
	verifier, log := &staticVerifier{}, slog.New(slog.DiscardHandler)
	deps := NewDeps(memory.New(), verifier, log, Policy{Scopes: everyScope})
	for _, f := range useCaseFields {
		if useCase(&deps, f).IsNil() {
			t.Errorf("NewDeps leaves Deps.%s nil: it needs the use case's line in NewDeps (deps.go)", f.Name)
		}
	}
	if deps.Verifier != verifier || deps.Log != log {
		t.Errorf("NewDeps keeps the verifier %v and the logger %v; want those it was given", deps.Verifier, deps.Log)
	}
	if _, err := New(Config{}, deps); err != nil {
		t.Fatalf("New refuses what NewDeps gives: %v", err)
	}
}

// A Policy that leaves the retention out keeps the feed's default: a
// cursor handed out a moment ago still reads on, where a retention of zero
// would expire every cursor at once (410 for every reader walking the feed).
func TestNewDepsKeepsTheDefaultRetentionWhenThePolicyHasNone(t *testing.T) {
	store := seededStore(t)
	deps := NewDeps(store, staticVerifier{}, slog.New(slog.DiscardHandler), Policy{Scopes: everyScope})
	reader := application.Principal{Subject: "test", Scopes: []string{everyScope.Read}}
	ctx := context.Background()
	first, err := deps.Events.List(ctx, reader, application.FeedQuery{Limit: 1})
	if err != nil || first.Count != 1 {
		t.Fatalf("the first page: %d events, %v; want the seeded plant's", first.Count, err)
	}
	if _, err := deps.Events.List(ctx, reader, application.FeedQuery{After: first.Next, HasAfter: true, Limit: 1}); err != nil {
		t.Fatalf("reading on from a cursor just handed out: %v", err)
	}
}

// New names every use case a Deps leaves out, so that wiring it wrong fails
// at start-up rather than answering 404 or 405 for a whole operation.
func TestNewRefusesAMissingUseCase(t *testing.T) {
	var names []string
	for _, f := range useCaseFields {
		names = append(names, "Deps."+f.Name)
		deps := useCases(memory.New(), everyScope)
		useCase(&deps, f).SetZero()
		deps.Verifier, deps.Log = staticVerifier{}, slog.New(slog.NewJSONHandler(io.Discard, nil))
		_, err := New(Config{}, deps)
		if want := "httpapi: Deps." + f.Name + " is missing"; err == nil || err.Error() != want {
			t.Errorf("without %s: New answered %v, want %q", f.Name, err, want)
		}
	}
	_, err := New(Config{}, Deps{Verifier: staticVerifier{}, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if want := "httpapi: " + strings.Join(names, ", ") + " are missing"; len(names) > 1 && (err == nil || err.Error() != want) {
		t.Errorf("without use cases: New answered %v, want %q", err, want)
	}
}

// Every use case of Deps is served by a route of the router and traced in a
// span of its own. A route is found serving a use case by refusing that use
// case's scope alone: the routes that then answer 403 are the ones that
// admit the caller through it. The span is found by calling the use case as
// the API holds it, inside a recording request span.
func TestEveryUseCaseHasARouteAndASpan(t *testing.T) {
	store := memory.New()
	closed := useCases(store, application.Scopes{Read: "plants:none", Write: "plants:none"})
	forbidden := func(api *API) []string {
		var routes []string
		for _, r := range routeTable(t, api) {
			req := httptest.NewRequest(r.method, samplePath(r.pattern), nil)
			req.Header.Set("Authorization", "Bearer any")
			req.Header.Set("Content-Type", "application/json")
			if record(t, api, req).Code == http.StatusForbidden {
				routes = append(routes, r.method+" "+r.pattern)
			}
		}
		return routes
	}
	if routes := forbidden(newAPIFrom(t, useCases(store, everyScope))); len(routes) > 0 {
		t.Fatalf("with every scope granted, %v answer 403", routes)
	}
	for _, f := range useCaseFields {
		deps := useCases(store, everyScope)
		useCase(&deps, f).Set(useCase(&closed, f))
		if routes := forbidden(newAPIFrom(t, deps)); len(routes) == 0 {
			t.Errorf("Deps.%s: no route admits a caller through it; it needs a line in routes", f.Name)
		}
	}

	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	deps := useCases(store, everyScope)
	deps.Tracing = tp
	api := newAPIFrom(t, deps)
	spans := map[string]string{} // span name → field
	for _, f := range useCaseFields {
		ctx, request := tp.Tracer("test").Start(context.Background(), "request")
		callUseCase(ctx, useCase(&api.deps, f))
		request.End()
		var own []sdktrace.ReadOnlySpan
		for _, s := range recorder.Ended() {
			if s.Parent().SpanID() == request.SpanContext().SpanID() {
				own = append(own, s)
			}
		}
		if len(own) != 1 {
			t.Errorf("Deps.%s: %d spans in the request's; want one, the use case's: it needs a line in traceUseCases", f.Name, len(own))
			continue
		}
		name := own[0].Name()
		if other, ok := spans[name]; ok {
			t.Errorf("Deps.%s and Deps.%s both start spans named %q", other, f.Name, name)
		}
		spans[name] = f.Name
	}
}

// callUseCase calls every method of uc but Authorize, with ctx for a context
// and zero values for the rest: a caller with no scope, which each use case
// refuses before it reaches the store.
func callUseCase(ctx context.Context, uc reflect.Value) {
	contextType := reflect.TypeFor[context.Context]()
	for i := range uc.NumMethod() {
		m := uc.Type().Method(i)
		if m.Name == "Authorize" {
			continue
		}
		fn := uc.Method(i)
		args := make([]reflect.Value, fn.Type().NumIn())
		for j := range args {
			if in := fn.Type().In(j); in == contextType {
				args[j] = reflect.ValueOf(ctx)
			} else {
				args[j] = reflect.Zero(in)
			}
		}
		fn.Call(args)
	}
}
