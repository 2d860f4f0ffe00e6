package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/application"
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

// Claims and settlements commit without waiting for an fsync; the writer is
// durable again before anything else uses it, whatever they did.
func TestClaimsAndSettlementsLeaveTheWriterDurable(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	synchronous := func(q interface {
		QueryRowxContext(context.Context, string, ...any) *sqlx.Row
	}) int {
		var mode int
		if err := q.QueryRowxContext(ctx, "PRAGMA synchronous").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		return mode
	}
	if err := s.relaxed(ctx, func(c *sqlx.Conn) error {
		if mode := synchronous(c); mode != 1 {
			t.Errorf("synchronous=%d inside, want 1 (NORMAL)", mode)
		}
		return errors.New("the claim failed")
	}); err == nil {
		t.Error("the error of the relaxed function was lost")
	}
	func() {
		defer func() { _ = recover() }()
		_ = s.relaxed(ctx, func(*sqlx.Conn) error { panic("a fault in the claim") })
	}()
	if mode := synchronous(s.write); mode != 2 {
		t.Errorf("synchronous=%d after a panic, want 2 (FULL)", mode)
	}
	if _, err := s.ClaimDue(ctx, "http://a.example/hook", time.Now(), time.Minute, 8); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(ctx, []application.Settlement{{ID: "msg_none", Claim: "none", Delivered: true}}); err != nil {
		t.Fatal(err)
	}
	if mode := synchronous(s.write); mode != 2 {
		t.Errorf("synchronous=%d after claims and settlements, want 2 (FULL)", mode)
	}
}
