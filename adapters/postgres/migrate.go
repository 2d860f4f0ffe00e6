package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockRetries is how many one-second waits a replica spends on the
// migration lock while another replica migrates.
const migrationLockRetries = 120

// Migrate brings the schema up to date. It is idempotent, and replicas that
// start together may all call it: a lock lets one of them apply the
// migrations while the others wait and then find nothing to do.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.checkEncoding(ctx); err != nil {
		return err
	}
	lockOpt, err := s.migrationLock()
	if err != nil {
		return fmt.Errorf("store: migration lock: %w", err)
	}
	provider, err := s.migrations(lockOpt)
	if err != nil {
		return err
	}
	if _, err := provider.Up(ctx); err != nil {
		return s.fail("migrate", err)
	}
	return nil
}

// migrationLock is a session-level advisory lock on sessions of the store's
// own. Through a transaction pooler a session lock would be taken on one
// server session and released (or not) on another, and left to block every
// later migration, so the lock is then a row in a table of its own
// (goose_lock), leased and kept alive while the migrations run.
func (s *Store) migrationLock() (goose.ProviderOption, error) {
	if s.cfg.Pooler.shared() {
		locker, err := lock.NewPostgresTableLocker(
			lock.WithTableLockTimeout(time.Second, migrationLockRetries),
			lock.WithTableLogger(s.log))
		return goose.WithLocker(locker), err
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, migrationLockRetries))
	return goose.WithSessionLocker(locker), err
}

// SchemaBehind reports whether this build knows migrations the database has
// not applied.
func (s *Store) SchemaBehind(ctx context.Context) (bool, error) {
	// Without its version table the schema is behind; goose would create
	// the table to say so, and this check writes nothing.
	var versioned bool
	if err := s.db.GetContext(ctx, &versioned, "SELECT to_regclass('goose_db_version') IS NOT NULL"); err != nil {
		return false, s.fail("migrate", err)
	}
	if !versioned {
		return true, nil
	}
	provider, err := s.migrations()
	if err != nil {
		return false, err
	}
	pending, err := provider.HasPending(ctx)
	if err != nil {
		return false, s.fail("migrate", err)
	}
	return pending, nil
}

func (s *Store) migrations(opts ...goose.ProviderOption) (*goose.Provider, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	opts = append(opts, goose.WithDisableGlobalRegistry(true), goose.WithSlog(s.log))
	provider, err := goose.NewProvider(goose.DialectPostgres, s.db.DB, sub, opts...)
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	return provider, nil
}

// checkEncoding refuses a database whose encoding is not UTF-8: there
// char_length would count bytes, and the CHECK constraints would refuse names
// that the domain accepts.
func (s *Store) checkEncoding(ctx context.Context) error {
	var encoding string
	if err := s.db.GetContext(ctx, &encoding, "SHOW server_encoding"); err != nil {
		return s.fail("migrate", err)
	}
	if !strings.EqualFold(encoding, "UTF8") {
		return fmt.Errorf("store: the database encoding is %s; plants need UTF8", encoding)
	}
	return nil
}
