package httpapi

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// seededStore returns a memory store holding Aloe under id 1, so that
// creates can be stored, replayed or refused as conflicts.
func seededStore(t testing.TB) *memory.Store {
	t.Helper()
	np, err := domain.ParseNewPlant(1, "Aloe", nil)
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

// useCases are the API's dependencies with every use case over store and
// none of the others: an operation added to the API adds one line here, and
// both the test API and the served one have it.
func useCases(store *memory.Store, scopes application.Scopes) Deps {
	return Deps{
		Create: application.NewCreatePlant(store, scopes),
		Get:    application.NewGetPlant(store, scopes),
		List:   application.NewListPlants(store, scopes),
		Delete: application.NewDeletePlant(store, store, scopes),
		Change: application.NewChangePlant(store, store, scopes),
	}
}

// newTestAPI serves the real router and use cases over store, with a
// verifier that accepts every token as a reader and writer.
func newTestAPI(t testing.TB, store *memory.Store, maxBody int64) *API {
	t.Helper()
	deps := useCases(store, everyScope)
	deps.Verifier = staticVerifier{application.Principal{Subject: "test", Scopes: []string{everyScope.Read, everyScope.Write}}}
	deps.Log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	api, err := New(Config{MaxBodyBytes: maxBody}, deps)
	if err != nil {
		t.Fatal(err)
	}
	return api
}
