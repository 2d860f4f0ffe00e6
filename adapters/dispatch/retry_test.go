package dispatch_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
)

// attemptTimes is a receiver script that fails each event's first fails
// attempts and records when every attempt came.
type attemptTimes struct {
	fails int
	mu    sync.Mutex
	at    map[string][]time.Time
}

func (a *attemptTimes) answer(e application.Event, attempt int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.at == nil {
		a.at = map[string][]time.Time{}
	}
	a.at[e.ID] = append(a.at[e.ID], time.Now())
	if attempt <= a.fails {
		return &application.DeliveryError{Outcome: "status", Status: 503, Detail: "503"}
	}
	return nil
}

// A retry is claimed when its back-off ends, not at the next poll: with
// polls an hour apart, an event that failed three times is delivered
// within its back-off.
func TestRetriesComeWhenTheyFallDueNotAtThePoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		script := &attemptTimes{fails: 3}
		c := &counts{}
		cfg := fast // polls hourly
		cfg.Retry.RetryMin, cfg.Retry.RetryMax = 50*time.Millisecond, 200*time.Millisecond
		start(t, store, &receiver{answer: script.answer}, c, cfg)
		createPlants(t, store, 1)
		advance(time.Second)
		if c.count("delivered") != 1 || c.count("status") != 3 {
			t.Fatalf("outcomes %v; want the delivery after three failures", c.outcomes)
		}
	})
}

// The back-off of each event is drawn at random between half and all of its
// doubled wait, and the attempts keep those times: the retries of events
// that failed together spread over that range instead of coming back at
// the same instant.
func TestRetriesOfEventsThatFailedTogetherAreSpread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		script := &attemptTimes{fails: 1}
		c := &counts{}
		cfg := fast
		cfg.Concurrency = 32
		cfg.Retry.RetryMin, cfg.Retry.RetryMax = 400*time.Millisecond, time.Second
		start(t, store, &receiver{answer: script.answer}, c, cfg)
		const events = 20
		createPlants(t, store, events)
		advance(time.Second)
		if c.count("delivered") != events {
			t.Fatalf("outcomes %v; want %d delivered", c.outcomes, events)
		}
		script.mu.Lock()
		defer script.mu.Unlock()
		shortest, longest := time.Hour, time.Duration(0)
		for id, at := range script.at {
			if len(at) != 2 {
				t.Fatalf("event %s attempted %d times", id, len(at))
			}
			gap := at[1].Sub(at[0])
			if gap < 200*time.Millisecond || gap > 400*time.Millisecond+20*time.Millisecond {
				t.Errorf("event %s retried after %s; want within its back-off, 200 to 400ms", id, gap)
			}
			shortest, longest = min(shortest, gap), max(longest, gap)
		}
		// Twenty draws from 200 to 400 ms span far more than 50 ms but for
		// once in billions of runs.
		if longest-shortest < 50*time.Millisecond {
			t.Errorf("retries came %s to %s after the first attempts: not spread", shortest, longest)
		}
	})
}

// A receiver that fails, redirects or is down for a while gets the event
// once it answers 2xx, and every attempt is observed with its outcome; the
// sender (adapters/webhook) says which outcome an answer is.
func TestEachReceiverIsRetriedUntilItAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const failing, redirecting, down = "http://failing.example/", "http://redirecting.example/", "http://down.example/"
		store := memory.New(failing, redirecting, down)
		var up atomic.Bool
		r := &receiver{answer: func(e application.Event, attempt int) error {
			switch {
			case e.URL == failing && attempt <= 2:
				return &application.DeliveryError{Outcome: "status", Status: 500 + attempt, Detail: "5xx"}
			case e.URL == redirecting && attempt <= 2:
				return &application.DeliveryError{Outcome: "redirect", Status: 307, Detail: "not followed"}
			case e.URL == down && !up.Load():
				return &application.DeliveryError{Outcome: "refused", Detail: "connection refused"}
			}
			return nil
		}}
		c := &counts{}
		start(t, store, r, c, fast)
		createPlants(t, store, 1)
		advance(time.Second)
		if c.count("delivered") != 2 || c.count("refused") < 1 || pending(store, false) != 1 {
			t.Fatalf("outcomes %v, %d pending; want the receiver that is down waited for", c.outcomes, pending(store, false))
		}
		up.Store(true)
		advance(time.Second)
		want := map[string]int{"status": 2, "redirect": 2, "delivered": 3}
		for outcome, n := range want {
			if c.count(outcome) != n {
				t.Errorf("outcomes %v; want %v and some refused", c.outcomes, want)
			}
		}
		if pending(store, false) != 0 {
			t.Errorf("%d events pending; want none", pending(store, false))
		}
	})
}
