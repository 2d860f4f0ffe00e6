package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate brings the schema up to date. It is idempotent: migrations already
// applied are skipped. Run it from one process at a time.
func (s *Store) Migrate(ctx context.Context) error {
	p, err := s.migrations()
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return edgeError("migrate", err)
	}
	return nil
}

// SchemaBehind reports whether this build knows migrations the store has not
// applied.
func (s *Store) SchemaBehind(ctx context.Context) (bool, error) {
	// Without its version table the schema is behind; goose would create
	// the table to say so, and this check writes nothing.
	var versioned bool
	if err := s.write.GetContext(ctx, &versioned,
		"SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'"); err != nil {
		return false, edgeError("migrate", err)
	}
	if !versioned {
		return true, nil
	}
	p, err := s.migrations()
	if err != nil {
		return false, err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return false, edgeError("migrate", err)
	}
	return pending, nil
}

func (s *Store) migrations() (*goose.Provider, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("sqlite: migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.write.DB, fsys,
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: migrations: %w", err)
	}
	return p, nil
}
