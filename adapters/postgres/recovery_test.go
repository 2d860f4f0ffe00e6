package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/application"
)

// The same Store recovers when its database comes back: no restart, no
// writer left stuck on a dead connection.
func TestStoreRecoversWhenTheDatabaseAcceptsConnectionsAgain(t *testing.T) {
	s, url := newStore(t, func(c *Config) { c.QueryTimeout = 2 * time.Second })
	admin := pgtest.Admin(t)
	name := pgtest.DatabaseName(url)
	ctx := context.Background()
	if _, _, err := s.InsertIfAbsent(ctx, record(t, 1, "Before", "")); err != nil {
		t.Fatal(err)
	}

	if _, err := admin.Exec("ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS true") })
	if _, err := admin.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name); err != nil {
		t.Fatal(err)
	}

	for i := range 3 { // more than one: every writer meets its dead connection
		_, _, err := s.InsertIfAbsent(ctx, record(t, int64(10+i), "During", ""))
		if !errors.Is(err, application.ErrUnavailable) {
			t.Fatalf("create while refused = %v; want ErrUnavailable", err)
		}
		assertNoDriverError(t, err)
	}
	if err := s.Ping(ctx); !errors.Is(err, application.ErrUnavailable) {
		t.Fatalf("Ping while refused = %v; want ErrUnavailable", err)
	}

	if _, err := admin.Exec("ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS true"); err != nil {
		t.Fatal(err)
	}
	id := int64(99)
	require.Eventually(t, func() bool {
		id++
		_, _, err := s.InsertIfAbsent(ctx, record(t, id, "After", ""))
		return err == nil
	}, time.Minute, 50*time.Millisecond, "the store recovers once the database accepts connections")
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping after recovery: %v", err)
	}
	// Every writer works again, not only the one that recovered first.
	for i := range 2 * s.cfg.MaxOpenConns {
		if _, _, err := s.InsertIfAbsent(ctx, record(t, int64(1000+i), "After", "")); err != nil {
			t.Fatalf("create %d after recovery: %v", i, err)
		}
	}
}

// A database that does not answer within QueryTimeout makes the store
// unavailable for that batch, and only for that batch.
func TestQueryTimeoutIsUnavailableThenPasses(t *testing.T) {
	s, url := newStore(t, func(c *Config) { c.QueryTimeout = 300 * time.Millisecond })
	ctx := context.Background()
	other, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("LOCK TABLE plants IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}

	_, _, err = s.InsertIfAbsent(ctx, record(t, 1, "Slow", ""))
	if !errors.Is(err, application.ErrUnavailable) {
		t.Fatalf("create on a locked table = %v; want ErrUnavailable", err)
	}
	assertNoDriverError(t, err)

	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	rec := record(t, 1, "Slow", "")
	if got, _, err := s.InsertIfAbsent(ctx, rec); err != nil || !samePlant(got, rec.Plant) {
		t.Fatalf("create after the lock = %v, %v; want the plant stored", got, err)
	}
}
