package postgres

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// openStore opens a store on url, closed when the test ends.
func openStore(t testing.TB, url string, tune ...func(*Config)) *Store {
	t.Helper()
	cfg := Config{URL: url, ConnectTimeout: 10 * time.Second}
	for _, f := range tune {
		f(&cfg)
	}
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// newStore opens a store on a fresh, migrated database and returns its URL.
func newStore(t testing.TB, tune ...func(*Config)) (*Store, string) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	s := openStore(t, url, tune...)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s, url
}

// record builds a valid record; tag "" means no tag.
func record(t testing.TB, id int64, name, tag string) application.Record {
	t.Helper()
	var tagp *string
	if tag != "" {
		tagp = &tag
	}
	np, err := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: name, Tag: tagp})
	if err != nil {
		t.Fatalf("ParseNewPlant(%d, %q, %q): %v", id, name, tag, err)
	}
	return application.Record{
		Plant:     domain.PlantFrom(np),
		CreatedBy: "tester",
		CreatedAt: time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC),
	}
}

// samePlant reports whether two plants have the same id and content.
func samePlant(a, b domain.Plant) bool {
	return a.ID() == b.ID() && a.Name() == b.Name() && a.Tag() == b.Tag()
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// storeFerns stores a plant named Fern, without a tag, under each id.
func storeFerns(t testing.TB, s *Store, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		if _, _, err := s.InsertIfAbsent(context.Background(), record(t, id, "Fern", "")); err != nil {
			t.Fatal(err)
		}
	}
}

// insertEvent stores an event around the service, as a statement of an
// operator's would: $1 the type, $2 its item.
const insertEvent = `INSERT INTO plant_events (number, lines)
SELECT n, plant_event_line(n, $1, $2) FROM nextval('plant_events_number_seq') AS n`
