package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/docs/openapitest"
	"github.com/plantstore/plantstore/domain"
)

// seededStore returns a memory store holding Aloe under id 1, so that
// creates can be stored, replayed or refused as conflicts.
func seededStore(t testing.TB) *memory.Store {
	t.Helper()
	np, err := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: "Aloe"})
	if err != nil {
		t.Fatal(err)
	}
	s := memory.New()
	rec := application.Record{Plant: domain.PlantFrom(np), CreatedBy: "seed", CreatedAt: time.Now()}
	if _, _, err := s.InsertIfAbsent(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return s
}

// everyScope is what the test verifier grants.
var everyScope = application.Scopes{Read: "plants:read", Write: "plants:write"}

// useCases are the API's dependencies with every use case over store, as
// NewDeps gives them, and no verifier nor logger: the caller sets those.
func useCases(store *memory.Store, scopes application.Scopes) Deps {
	return NewDeps(store, nil, nil, Policy{Scopes: scopes})
}

// newTestAPI is the real router and use cases over store, verifying tokens
// for real (jwttest); bearer is a reader's and writer's token for it. Tests
// that serve it without a listener check each answer with record.
func newTestAPI(t testing.TB, store *memory.Store, maxBody int64) *API {
	t.Helper()
	return newAPIWith(t, store, maxBody, jwttest.New(t).Verifier(t))
}

// bearer is an Authorization header that newTestAPI accepts from a reader
// and writer.
func bearer(t testing.TB) string {
	t.Helper()
	return "Bearer " + jwttest.New(t).Scoped(t, everyScope.Read+" "+everyScope.Write)
}

// newUnverifiedAPI is newTestAPI with a verifier that accepts any token, for
// the fuzz test and the benchmarks of encoding, which run a request millions
// of times; BenchmarkRequestPath measures the real verification.
func newUnverifiedAPI(t testing.TB, store *memory.Store, maxBody int64) *API {
	t.Helper()
	return newAPIWith(t, store, maxBody, staticVerifier{application.Principal{Subject: "test", Scopes: []string{everyScope.Read, everyScope.Write}}})
}

func newAPIWith(t testing.TB, store *memory.Store, maxBody int64, verifier application.TokenVerifier) *API {
	t.Helper()
	deps := NewDeps(store, verifier, slog.New(slog.NewJSONHandler(io.Discard, nil)), Policy{Scopes: everyScope})
	api, err := New(Config{MaxBodyBytes: maxBody}, deps)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// record serves r through a recorder and checks the answer against the
// OpenAPI document.
func record(t testing.TB, api *API, r *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	body := w.Body.Bytes()
	if r.Method == http.MethodHead {
		body = nil // net/http's server sends no body to HEAD; a recorder keeps it
	}
	contract(t).Check(t, r, w.Result(), body)
	return w
}

var loaded struct {
	once     sync.Once
	contract *openapitest.Contract
}

// contract is the OpenAPI document, loaded once for the package's tests.
func contract(t testing.TB) *openapitest.Contract {
	t.Helper()
	loaded.once.Do(func() { loaded.contract = openapitest.Load(t) })
	return loaded.contract
}
