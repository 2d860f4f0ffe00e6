package application_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
)

func TestRetryPolicyDefaults(t *testing.T) {
	got := application.RetryPolicy{}.WithDefaults()
	want := application.RetryPolicy{MaxAge: 72 * time.Hour, RetryMin: time.Second, RetryMax: time.Hour}
	if got != want {
		t.Fatalf("defaults %+v; want %+v", got, want)
	}
	kept := application.RetryPolicy{MaxAge: time.Minute, RetryMin: 5 * time.Millisecond, RetryMax: time.Second}
	if got := kept.WithDefaults(); got != kept {
		t.Fatalf("WithDefaults changed set fields: %+v", got)
	}
}

// The full wait doubles from RetryMin per failed attempt up to RetryMax,
// without overflowing however many attempts were made.
func TestWaitDoublesUpToItsMaximum(t *testing.T) {
	p := application.RetryPolicy{}.WithDefaults()
	for _, row := range []struct {
		n    int
		want time.Duration
	}{
		{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {12, 2048 * time.Second},
		{13, time.Hour}, {35, time.Hour}, {64, time.Hour}, {300, time.Hour},
	} {
		if got := p.Wait(row.n); got != row.want {
			t.Errorf("Wait(%d) = %s; want %s", row.n, got, row.want)
		}
	}
}

// With the defaults, the wait after the nth failed attempt is a random
// point in the upper half of one second doubled n-1 times, and never more
// than an hour, up to the 150 or so attempts that fit in the maximum age.
func TestBackoffDoublesFromASecondToAnHourWithJitter(t *testing.T) {
	p := application.RetryPolicy{}.WithDefaults()
	for n := 1; n <= 300; n++ {
		want := time.Hour
		if n <= 13 { // 2^12 s is past an hour
			want = min(time.Hour, time.Second<<(n-1))
		}
		seen := map[time.Duration]bool{}
		for range 200 {
			got := p.Backoff(n)
			if got < want/2 || got > want {
				t.Fatalf("Backoff(%d) = %s; want within [%s, %s]", n, got, want/2, want)
			}
			seen[got] = true
		}
		if len(seen) < 100 {
			t.Errorf("Backoff(%d) took %d distinct values in 200 draws; want jitter", n, len(seen))
		}
	}
}

func TestAttemptOutcomeNamesTheResultForMetrics(t *testing.T) {
	for _, row := range []struct {
		err  error
		want string
	}{
		{nil, "delivered"},
		{&application.DeliveryError{Outcome: "status", Status: 500}, "status"},
		{fmt.Errorf("wrapped: %w", &application.DeliveryError{Outcome: "refused"}), "refused"},
		{context.DeadlineExceeded, "error"},
	} {
		if got := application.AttemptOutcome(row.err); got != row.want {
			t.Errorf("AttemptOutcome(%v) = %q; want %q", row.err, got, row.want)
		}
	}
}

// An attempt is settled as delivered, as due again after its back-off
// (never later than the event's maximum age), or, at that age, as failed;
// an attempt that a stop cut short never fails its event, whatever its age.
func TestSettleAppliesTheDeliveryRules(t *testing.T) {
	p := application.RetryPolicy{MaxAge: time.Hour, RetryMin: time.Minute, RetryMax: 8 * time.Minute}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := from.Add(time.Hour)
	refused := &application.DeliveryError{Outcome: "refused", Detail: "connection refused"}
	for _, row := range []struct {
		name       string
		attempts   int // before this one
		a          application.Attempt
		delivered  bool
		failed     bool
		retryFrom  time.Duration // RetryAt within [At+retryFrom, At+retryTo] ...
		retryTo    time.Duration
		retryAtEnd bool // ... or exactly at the maximum age
	}{
		{name: "delivered", a: application.Attempt{At: from.Add(time.Minute)}, delivered: true},
		{name: "delivered past the maximum age", a: application.Attempt{At: end.Add(time.Minute)}, delivered: true},
		{name: "first failure", a: application.Attempt{Err: refused, At: from}, retryFrom: 30 * time.Second, retryTo: time.Minute},
		{name: "third failure", attempts: 2, a: application.Attempt{Err: refused, At: from}, retryFrom: 2 * time.Minute, retryTo: 4 * time.Minute},
		{name: "back-off capped", attempts: 40, a: application.Attempt{Err: refused, At: from}, retryFrom: 4 * time.Minute, retryTo: 8 * time.Minute},
		{name: "retry capped at the maximum age", attempts: 40, a: application.Attempt{Err: refused, At: end.Add(-time.Minute)}, retryAtEnd: true},
		{name: "failure at the maximum age", attempts: 9, a: application.Attempt{Err: refused, At: end}, failed: true, retryAtEnd: true},
		{name: "failure past the maximum age", attempts: 9, a: application.Attempt{Err: refused, At: end.Add(time.Second)}, failed: true, retryAtEnd: true},
		{name: "cut short at the maximum age", attempts: 9, a: application.Attempt{Err: refused, At: end, CutShort: true}, retryAtEnd: true},
		{name: "cut short early", a: application.Attempt{Err: refused, At: from, CutShort: true}, retryFrom: 30 * time.Second, retryTo: time.Minute},
	} {
		t.Run(row.name, func(t *testing.T) {
			e := application.Event{ID: "msg_1", Claim: "7", RetryFrom: from, Attempts: row.attempts}
			s := p.Settle(e, row.a)
			if s.ID != e.ID || s.Claim != e.Claim || s.Delivered != row.delivered || s.Failed != row.failed {
				t.Fatalf("settlement %+v; want delivered %v, failed %v, for event %s claim %s", s, row.delivered, row.failed, e.ID, e.Claim)
			}
			switch {
			case row.delivered:
				if s.Error != "" || !s.RetryAt.IsZero() {
					t.Errorf("a delivery settled with error %q and retry at %s", s.Error, s.RetryAt)
				}
				return
			case s.Error != refused.Error():
				t.Errorf("error %q; want %q", s.Error, refused.Error())
			}
			if row.retryAtEnd {
				if !s.RetryAt.Equal(end) {
					t.Errorf("retry at %s; want the maximum age, %s", s.RetryAt, end)
				}
			} else if wait := s.RetryAt.Sub(row.a.At); wait < row.retryFrom || wait > row.retryTo {
				t.Errorf("retry %s after the attempt; want within [%s, %s]", wait, row.retryFrom, row.retryTo)
			}
		})
	}
}

func TestLastAttemptComesAtTheMaximumAgeFromTheRetryWindow(t *testing.T) {
	p := application.RetryPolicy{MaxAge: time.Hour}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	redelivered := created.Add(100 * time.Hour)
	e := application.Event{CreatedAt: created, RetryFrom: redelivered}
	if got := p.LastAttemptAt(e); !got.Equal(redelivered.Add(time.Hour)) {
		t.Fatalf("last attempt at %s; want an hour after the redelivery", got)
	}
}
