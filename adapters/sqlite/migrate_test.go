package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/plantstore/plantstore/application"
)

func TestMigrateIsIdempotent(t *testing.T) {
	s := newStore(t) // migrated once already
	p := mustPlant(t, 1, "Fern", nil)
	if _, _, err := s.InsertIfAbsent(context.Background(), recordOf(p)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatalf("Migrate again: %v", err)
		}
	}
	stored, inserted, err := s.InsertIfAbsent(context.Background(), recordOf(p))
	if err != nil || inserted || stored != p {
		t.Errorf("after migrating again: %v, inserted=%v, %v; want the plant kept", stored, inserted, err)
	}
}

func TestPingNeedsTheSchema(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "plants.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx); err == nil {
		t.Error("Ping before Migrate succeeded; readiness must not pass without the schema")
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping after Migrate: %v", err)
	}
}

func TestAnUnreachableFileIsUnavailable(t *testing.T) {
	_, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "missing", "dir", "plants.db")})
	if !errors.Is(err, application.ErrUnavailable) {
		t.Errorf("Open in a missing directory = %v, want ErrUnavailable", err)
	}
}
