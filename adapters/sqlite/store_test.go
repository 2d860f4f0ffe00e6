package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/storetest"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestStoreKeepsThePlantStoreContract(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) storetest.Store {
			return openMigrated(t, filepath.Join(t.TempDir(), "plants.db"))
		},
		Reopen: func(t *testing.T, s storetest.Store) storetest.Store {
			return openMigrated(t, s.(*Store).path)
		},
		OpenOutbox: func(t *testing.T, receivers []string) storetest.OutboxStore {
			return openOutbox(t, Config{Path: filepath.Join(t.TempDir(), "plants.db"), Receivers: receivers})
		},
		OpenPayload: func(t *testing.T, p application.Payload, receivers []string, same storetest.OutboxStore) storetest.OutboxStore {
			path := filepath.Join(t.TempDir(), "plants.db")
			if same != nil {
				path = same.(*Store).path
			}
			return openOutbox(t, Config{Path: path, Receivers: receivers, Payload: p})
		},
	})
}

// openOutbox opens a migrated store with cfg, closed when the test ends.
func openOutbox(t *testing.T, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// openMigrated opens a migrated store on path, closed when the test ends.
func openMigrated(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Config{Path: path})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

func newStore(t testing.TB) *Store {
	t.Helper()
	return openMigrated(t, filepath.Join(t.TempDir(), "plants.db"))
}

func mustPlant(t testing.TB, id int64, name string, tag *string) domain.Plant {
	t.Helper()
	np, err := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: name, Tag: tag})
	if err != nil {
		t.Fatalf("invalid test plant: %v", err)
	}
	return domain.PlantFrom(np)
}

func recordOf(p domain.Plant) application.Record {
	return application.Record{Plant: p, CreatedBy: "tester", CreatedAt: time.Now().UTC()}
}

func ptr(s string) *string { return &s }

// The creator and the creation time are kept with the plant, and a replay
// leaves them as the first create wrote them.
func TestCreatorAndTimeAreRecorded(t *testing.T) {
	s := newStore(t)
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	rec := application.Record{Plant: mustPlant(t, -9, "Fern", nil), CreatedBy: "tester", CreatedAt: at}
	if _, inserted, err := s.InsertIfAbsent(context.Background(), rec); err != nil || !inserted {
		t.Fatalf("insert: %v %v", inserted, err)
	}
	rec.CreatedBy, rec.CreatedAt = "someone else", at.Add(time.Hour)
	if _, inserted, err := s.InsertIfAbsent(context.Background(), rec); err != nil || inserted {
		t.Fatalf("replay: %v %v", inserted, err)
	}
	var row struct {
		CreatedBy string `db:"created_by"`
		CreatedAt string `db:"created_at"`
	}
	if err := s.read.Get(&row, `SELECT created_by, created_at FROM plants WHERE id = -9`); err != nil {
		t.Fatal(err)
	}
	if row.CreatedBy != "tester" || row.CreatedAt != "2026-11-22T10:00:00.123456789Z" {
		t.Fatalf("stored %+v", row)
	}
}
