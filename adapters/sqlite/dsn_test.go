package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A path is a file name, even with characters a file: URI treats specially.
func TestOpenUsesThePathAsGiven(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "my plants #1?mode=ro&x=%41.db")
	s := openMigrated(t, path)
	p := mustPlant(t, 1, "Fern", nil)
	if _, inserted, err := s.InsertIfAbsent(context.Background(), recordOf(p)); err != nil || !inserted {
		t.Fatalf("InsertIfAbsent: inserted=%v, %v", inserted, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file not at the given path: %v", err)
	}
}

func TestOpenRefusesAnInMemoryDatabase(t *testing.T) {
	if _, err := Open(context.Background(), Config{Path: ":memory:"}); err == nil {
		t.Error("Open(:memory:) succeeded; creates would not be durable")
	}
}

func TestDSNIsTheWritersDSN(t *testing.T) {
	if got, want := DSN("/tmp/p.db"), dsn("/tmp/p.db", false); got != want {
		t.Errorf("DSN = %q, want the writer's %q", got, want)
	}
}
