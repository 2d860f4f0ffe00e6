package sqlite

import (
	"context"
	"testing"

	"github.com/jmoiron/sqlx"
)

func TestEveryConnectionIsDurable(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for name, pool := range map[string]*sqlx.DB{"write": s.write, "read": s.read} {
		// Hold every connection the pool may open at once, so none is
		// checked twice and none escapes the check.
		n := pool.Stats().MaxOpenConnections
		conns := make([]*sqlx.Conn, n)
		for i := range conns {
			c, err := pool.Connx(ctx)
			if err != nil {
				t.Fatalf("%s pool: %v", name, err)
			}
			defer c.Close()
			conns[i] = c
		}
		for i, c := range conns {
			var mode string
			var sync, busy int
			if err := c.QueryRowxContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRowxContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRowxContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
				t.Fatal(err)
			}
			if mode != "wal" || sync != 2 || busy != busyTimeoutMillis {
				t.Errorf("%s connection %d: journal_mode=%s synchronous=%d busy_timeout=%d; want wal, 2 (FULL), %d",
					name, i, mode, sync, busy, busyTimeoutMillis)
			}
		}
	}
}
