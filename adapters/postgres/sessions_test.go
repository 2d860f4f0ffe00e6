package postgres

import (
	"context"
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

// A session keeps the deadline of its last call; closing it long after
// that deadline, when the store closes, still succeeds.
func TestClosingSessionsPastTheirLastDeadlineSucceeds(t *testing.T) {
	_, url := newStore(t)
	const timeout = 25 * time.Millisecond
	s, err := Open(context.Background(), Config{URL: url, QueryTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	// A read that a busy machine makes miss the short deadline is tried
	// again: what matters is a session that had a deadline.
	for tries := 0; ; tries++ {
		_, _, err := s.FindPlant(context.Background(), 1)
		if err == nil {
			break
		}
		if tries == 20 {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * timeout)
	if err := s.Close(); err != nil {
		t.Fatalf("Close after the sessions' deadlines passed: %v", err)
	}
}
