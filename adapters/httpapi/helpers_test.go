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

// newTestAPI serves the real router and use cases over store, with a
// verifier that accepts every token as a reader and writer.
func newTestAPI(t testing.TB, store *memory.Store, maxBody int64) *API {
	t.Helper()
	api, err := New(Config{MaxBodyBytes: maxBody}, Deps{
		Create:   application.NewCreatePlant(store, everyScope),
		Get:      application.NewGetPlant(store, everyScope),
		List:     application.NewListPlants(store, everyScope),
		Delete:   application.NewDeletePlant(store, everyScope),
		Verifier: staticVerifier{application.Principal{Subject: "test", Scopes: []string{everyScope.Read, everyScope.Write}}},
		Log:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return api
}
