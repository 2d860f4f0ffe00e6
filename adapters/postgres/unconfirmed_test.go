package postgres

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/postgres/pgcluster"
)

// A commit waiting for a synchronous standby that is gone ends only when
// it is cancelled, and PostgreSQL then reports it committed, with a
// warning. Whichever way the statement runs (on its own, prepared, with
// rows), the session turns that success into errUnconfirmed; and a
// deadline that cuts the wait short is an error too, never a success.
func TestACommitTheStandbyDidNotConfirmIsNotASuccess(t *testing.T) {
	c := pgcluster.Start(t)
	pq, err := connector(c.Primary.URL(), PoolerNone)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(newSessions(pq, new(atomic.Uint64), 10*time.Second))
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.Exec("CREATE TABLE waits (n int)"); err != nil {
		t.Fatal(err)
	}
	c.Standby.Kill()

	// cancelled is a context cancelled, not timed out, after a moment: lib/pq
	// then asks the server to cancel the wait, and the server answers with
	// the warning and success.
	cancelled := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		return ctx
	}
	t.Run("exec", func(t *testing.T) {
		_, err := db.ExecContext(cancelled(), "INSERT INTO waits VALUES (1)")
		if !errors.Is(err, errUnconfirmed) {
			t.Errorf("Exec = %v; want errUnconfirmed", err)
		}
	})
	t.Run("prepared, with rows", func(t *testing.T) {
		stmt, err := db.Prepare("INSERT INTO waits VALUES ($1) RETURNING n")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		rows, err := stmt.QueryContext(cancelled(), 2)
		if err != nil {
			t.Fatalf("Query: %v", err)
		}
		for rows.Next() {
		}
		if err := rows.Err(); !errors.Is(err, errUnconfirmed) {
			t.Errorf("rows.Err() = %v; want errUnconfirmed", err)
		}
		_ = rows.Close()
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := db.ExecContext(ctx, "INSERT INTO waits VALUES (3)")
		if err == nil {
			t.Fatal("Exec succeeded without the standby")
		}
		if k := classify(err); k != unavailable {
			t.Errorf("classify(%v) = %v; want unavailable", err, k)
		}
	})
	// Every one of them is committed on the primary: their outcome was
	// unknown, not a failure.
	var n int
	if err := db.QueryRow("SELECT count(*) FROM waits").Scan(&n); err != nil || n == 0 {
		t.Errorf("rows on the primary: %d, %v; want the cut-short commits there", n, err)
	}
}
