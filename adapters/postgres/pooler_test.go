package postgres

import (
	"context"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// transactionPooler runs a store as it runs through a transaction pooler.
func transactionPooler(c *Config) { c.Pooler = PoolerTransaction }

// Through a transaction pooler the store sends no start-up options (PgBouncer
// refuses them): its sessions and the outbox's keep the database's settings;
// and it prepares no statement by name.
func TestTransactionPoolerKeepsNoSessionState(t *testing.T) {
	first, raw := newStore(t)
	// Whatever the server's default, the database asks for JIT.
	if _, err := first.db.Exec(`ALTER DATABASE ` + pq.QuoteIdentifier(pgtest.DatabaseName(raw)) + ` SET jit = on`); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, raw, transactionPooler, func(c *Config) { c.MaxOpenConns = 1 })
	outbox, err := s.outboxDB()
	if err != nil {
		t.Fatal(err)
	}
	for pool, db := range map[string]*sqlx.DB{"store": s.db, "outbox": outbox} {
		var jit, seqscan, commit string
		if err := db.QueryRow("SELECT current_setting('jit'), current_setting('enable_seqscan'), current_setting('synchronous_commit')").Scan(&jit, &seqscan, &commit); err != nil {
			t.Fatal(err)
		}
		if jit != "on" || seqscan != "on" || commit != "on" {
			t.Errorf("%s: jit, enable_seqscan, synchronous_commit = %s, %s, %s; want the database's, on", pool, jit, seqscan, commit)
		}
	}
	ctx := context.Background()
	if _, _, err := s.InsertIfAbsent(ctx, record(t, 1, "Fern", "")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.FindPlant(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var named int
	if err := s.db.Get(&named, "SELECT count(*) FROM pg_prepared_statements"); err != nil {
		t.Fatal(err)
	}
	if named != 0 {
		t.Errorf("%d statements prepared by name on the store's one session; want none", named)
	}
}
