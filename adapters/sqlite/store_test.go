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
		Open: func(t *testing.T) application.PlantStore {
			return openMigrated(t, filepath.Join(t.TempDir(), "plants.db"))
		},
		Reopen: func(t *testing.T, s application.PlantStore) application.PlantStore {
			return openMigrated(t, s.(*Store).path)
		},
	})
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
	np, err := domain.ParseNewPlant(id, name, tag)
	if err != nil {
		t.Fatalf("invalid test plant: %v", err)
	}
	return domain.PlantFrom(np)
}

func recordOf(p domain.Plant) application.Record {
	return application.Record{Plant: p, CreatedBy: "tester", CreatedAt: time.Now().UTC()}
}

func ptr(s string) *string { return &s }
