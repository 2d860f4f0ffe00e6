package postgres

import (
	"context"
	"database/sql"
	"errors"
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
	db := sql.OpenDB(newSessions(pq, &serverWatch{}, 10*time.Second))
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
	t.Run("prepared, with rows, cancelled by the server", func(t *testing.T) {
		// An administrator's pg_cancel_backend ends the wait, not the
		// caller: database/sql, which closes rows of a cancelled context
		// itself, has no part in the outcome, which the rows report.
		stmt, err := db.Prepare("INSERT INTO waits VALUES ($1) RETURNING n")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		go cancelWaitForTheStandby(t, c)
		rows, err := stmt.QueryContext(context.Background(), 2)
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

// cancelWaitForTheStandby cancels, as an administrator would, the backend
// of c's primary that waits for the synchronous standby, once there is one.
func cancelWaitForTheStandby(t *testing.T, c *pgcluster.Cluster) {
	admin, err := sql.Open("postgres", c.Primary.URL())
	if err != nil {
		t.Error(err)
		return
	}
	defer admin.Close()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		var cancelled int
		err := admin.QueryRow(`SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`).Scan(&cancelled)
		if err != nil {
			t.Error(err)
			return
		}
		if cancelled > 0 {
			return
		}
	}
	t.Error("no backend waited for the standby")
}
