package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
)

// claim claims the first receiver's events.
func claim(t *testing.T, s OutboxStore, now time.Time, limit int) []application.Event {
	t.Helper()
	return claimFor(t, s, receivers[0], now, limit)
}

func claimFor(t *testing.T, s OutboxStore, url string, now time.Time, limit int) []application.Event {
	t.Helper()
	events, err := s.ClaimDue(context.Background(), url, now, time.Minute, limit)
	if err != nil {
		t.Fatalf("ClaimDue(%s): %v", url, err)
	}
	for _, e := range events {
		if e.URL != url {
			t.Fatalf("a claim of %s's events took one for %s", url, e.URL)
		}
	}
	return events
}

// outboxOfFerns opens a store announcing to the first receiver, stores n
// plants, and returns it with a time at which their events are due.
func outboxOfFerns(t *testing.T, h Harness, n int) (OutboxStore, time.Time) {
	t.Helper()
	s := openOutbox(t, h, receivers[:1])
	for i := range n {
		mustInsert(t, s, plant(t, int64(i), "Fern", nil))
	}
	return s, time.Now().Add(time.Second).Truncate(time.Microsecond) // stores keep microseconds
}

func claimsDueEventsOnceUntilTheLeaseEnds(t *testing.T, h Harness) {
	s, now := outboxOfFerns(t, h, 6)
	first := claim(t, s, now, 4)
	second := claim(t, s, now, 4)
	if len(first) != 4 || len(second) != 2 || len(claim(t, s, now, 4)) != 0 {
		t.Fatalf("claims took %d, %d; want 4, then the other 2, then none", len(first), len(second))
	}
	for _, e := range append(first, second...) {
		if e.Claim == "" || e.Attempts != 0 {
			t.Errorf("claimed %+v", e)
		}
	}
	// The lease of a claimer that died ends: the events are due again, and
	// the attempt it made counts.
	again := claim(t, s, now.Add(time.Minute+time.Second), 10)
	if len(again) != 6 || again[0].Attempts != 1 || again[0].Claim == first[0].Claim {
		t.Fatalf("after the lease %d claimed, %+v", len(again), again)
	}
}

func settlesAttempts(t *testing.T, h Harness) {
	s, now := outboxOfFerns(t, h, 4)
	c := claim(t, s, now, 4)
	retryAt := now.Add(10 * time.Second)
	err := s.Settle(context.Background(), []application.Settlement{
		{ID: c[0].ID, Claim: c[0].Claim, Delivered: true},
		{ID: c[1].ID, Claim: c[1].Claim, RetryAt: retryAt, Error: "500 Internal Server Error"},
		{ID: c[2].ID, Claim: c[2].Claim, Failed: true, RetryAt: retryAt, Error: "connection refused"},
		{ID: c[3].ID, Claim: "not this claim", Delivered: true}, // a claim another holds now
	})
	if err != nil {
		t.Fatalf("Settle: %v", err)
	}
	pending, failed := listAll(t, s, false), listAll(t, s, true)
	if len(pending) != 2 || len(failed) != 1 || failed[0].ID != c[2].ID || failed[0].LastError != "connection refused" {
		t.Fatalf("after settling: %d pending, failed %+v", len(pending), failed)
	}
	for _, e := range pending {
		if e.ID == c[0].ID {
			t.Fatal("a delivered event is still in the outbox")
		}
		if e.ID == c[1].ID && (e.LastError != "500 Internal Server Error" || !e.NextAt.Equal(retryAt)) {
			t.Errorf("retried event %+v; want due at %s", e, retryAt)
		}
	}
	if got := claim(t, s, retryAt.Add(-time.Millisecond), 10); len(got) != 0 {
		t.Fatalf("claimed %d events before they were due", len(got))
	}
	// The unsettled claim ends too; then both are due, and the failed one not.
	if got := claim(t, s, now.Add(2*time.Minute), 10); len(got) != 2 {
		t.Fatalf("claimed %d events once due; want the retried and the unsettled one", len(got))
	}
}

func claimsAreExclusiveUnderConcurrency(t *testing.T, h Harness) {
	const n = 60
	s, now := outboxOfFerns(t, h, n)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for {
				events, err := s.ClaimDue(context.Background(), receivers[0], now, time.Minute, 4)
				if err != nil {
					t.Errorf("ClaimDue: %v", err)
					return
				}
				if len(events) == 0 {
					return
				}
				mu.Lock()
				for _, e := range events {
					seen[e.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d events claimed; want all %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("event %s claimed %d times", id, c)
		}
	}
}

// Plants created at once share commits, whose events a store may keep
// together; claims still take them a few at a time, each once, and a lease
// that ends gives back only what was claimed.
func claimsEventsCommittedTogetherAPieceAtATime(t *testing.T, h Harness) {
	s := openOutbox(t, h, receivers)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, inserted, err := s.InsertIfAbsent(context.Background(), record(plant(t, int64(i), "Fern", nil))); err != nil || !inserted {
				t.Errorf("InsertIfAbsent(%d): inserted %t, %v", i, inserted, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if pending := listAll(t, s, false); len(pending) != 2*n {
		t.Fatalf("%d events listed as pending; want %d", len(pending), 2*n)
	}
	now := time.Now().Add(time.Second).Truncate(time.Microsecond) // stores keep microseconds
	claimed := map[string]application.Event{}
	// Each receiver's claims take its own events only, all of them.
	for _, url := range receivers {
		before := len(claimed)
		for first := true; ; first = false {
			c := claimFor(t, s, url, now, 3)
			if len(c) > 3 || (first && len(c) != 3) {
				t.Fatalf("a claim of at most 3 took %d", len(c))
			}
			if len(c) == 0 {
				break
			}
			for _, e := range c {
				if _, dup := claimed[e.ID]; dup {
					t.Fatalf("event %s claimed twice", e.ID)
				}
				if e.Claim == "" || e.Attempts != 0 || !e.RetryFrom.Equal(e.CreatedAt) || string(e.Item) != string(plantjson.AppendItem(nil, plant(t, int64(e.PlantID), "Fern", nil))) {
					t.Errorf("claimed %+v", e)
				}
				claimed[e.ID] = e
			}
		}
		if got := len(claimed) - before; got != n {
			t.Fatalf("%d events claimed for %s; want one per plant, %d", got, url, n)
		}
	}
	if len(claimed) != 2*n {
		t.Fatalf("%d events claimed; want every one of %d", len(claimed), 2*n)
	}
	pending, _, _, err := s.OutboxStats(context.Background())
	if err != nil || pending != 2*n {
		t.Fatalf("stats while every event is claimed: %d pending, %v; want %d", pending, err, 2*n)
	}
	for _, e := range listAll(t, s, false) {
		if _, ok := claimed[e.ID]; !ok || e.Attempts != 1 || !e.NextAt.Equal(now.Add(time.Minute)) {
			t.Errorf("listed %+v; want a claimed event with its attempt, due when its lease ends", e)
		}
	}
	for _, url := range receivers {
		if again := claimFor(t, s, url, now.Add(time.Minute+time.Second), 3*n); len(again) != n || again[0].Attempts != 1 {
			t.Fatalf("after the leases %d claimed for %s; want all %d again, each with its attempt", len(again), url, n)
		}
	}
}
