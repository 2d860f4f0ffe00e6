package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
)

// Sessions that turned read-only (a primary fenced or turned into a
// standby) fail the write that meets them as unavailable (503), and the
// store drops them all: the next write runs on a new session.
func TestReadOnlySessionsAreDroppedAfterTheFirstRefusal(t *testing.T) {
	const conns = 3
	s, _ := newStore(t, func(c *Config) { c.MaxOpenConns = conns })
	ctx := context.Background()
	held := make([]func() error, 0, conns)
	for range conns {
		c, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, "SET default_transaction_read_only = on"); err != nil {
			t.Fatal(err)
		}
		held = append(held, c.Close)
	}
	for _, release := range held {
		if err := release(); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := s.InsertIfAbsent(ctx, record(t, 1, "Fern", ""))
	if !errors.Is(err, application.ErrUnavailable) {
		t.Fatalf("write on a read-only session: %v; want ErrUnavailable", err)
	}
	for i := range 2 * conns {
		if _, _, err := s.InsertIfAbsent(ctx, record(t, int64(10+i), fmt.Sprintf("Fern %d", i), "")); err != nil {
			t.Fatalf("write %d after the refusal: %v; want it on a new session", i, err)
		}
	}
}

// lib/pq's refusals of every host of a URL for want of a primary are a
// failover under way, not a fault.
func TestNoPrimaryIsUnavailable(t *testing.T) {
	for _, msg := range []string{
		"pq: could not connect to any of the hosts:\nconnecting to a:1: session is read-only",
		"session is read-only",
		"server is in hot standby mode",
	} {
		if k := classify(errors.New(msg)); k != unavailable {
			t.Errorf("classify(%q) = %v; want unavailable", msg, k)
		}
	}
}

// A session keeps the deadline of its last call; closing it after that
// deadline has passed, as the store's Close does long after, still
// succeeds. The call's deadline is short, and grows on a machine too busy
// to answer within it: what matters is a session whose deadline passed.
func TestClosingSessionsPastTheirLastDeadlineSucceeds(t *testing.T) {
	_, url := newStore(t)
	c, err := connector(url, PoolerNone)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(newSessions(c, &serverWatch{}, 10*time.Second))
	db.SetMaxOpenConns(1)
	var deadline time.Time
	for wait := 20 * time.Millisecond; ; wait *= 2 {
		deadline = time.Now().Add(wait)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			break
		}
		if wait > 10*time.Second {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(deadline))
	if err := db.Close(); err != nil {
		t.Fatalf("Close after the session's deadline passed: %v", err)
	}
}
