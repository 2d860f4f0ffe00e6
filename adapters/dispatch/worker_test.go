package dispatch_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/plantstore/plantstore/adapters/dispatch"
	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestEveryStoredPlantIsAnnouncedToEveryReceiverOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook", "http://b.example/hook")
		r, c := &receiver{}, &counts{}
		start(t, store, r, c, fast) // polls hourly: only the commit signal wakes it
		createPlants(t, store, 50)
		// A replay and a conflict store nothing, so announce nothing.
		createPlants(t, store, 1)
		conflict, err := domain.ParseNewPlant(domain.PlantFields{ID: 0, Name: "Fern"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := application.NewCreatePlant(store, scopes).Create(context.Background(), writer, conflict); !errors.Is(err, domain.ErrConflict) {
			t.Fatalf("a conflicting create: %v; want ErrConflict", err)
		}
		advance(time.Second)
		if pending(store, false) != 0 || c.count("delivered") != 100 {
			t.Fatalf("%d pending, outcomes %v; want 100 deliveries", pending(store, false), c.outcomes)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.got) != 100 {
			t.Fatalf("%d events sent; want 2 receivers × 50 plants", len(r.got))
		}
		for id, n := range r.got {
			if n != 1 {
				t.Errorf("event %s sent %d times", id, n)
			}
		}
	})
}

func TestAFailingReceiverIsRetriedUntilItRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		var times []time.Time
		var mu sync.Mutex
		r := &receiver{answer: func(_ application.Event, attempt int) error {
			mu.Lock()
			times = append(times, time.Now())
			mu.Unlock()
			if attempt <= 4 {
				return &application.DeliveryError{Outcome: "status", Status: 500, Detail: "500"}
			}
			return nil
		}}
		c := &counts{}
		cfg := fast
		cfg.Poll = 5 * time.Millisecond
		start(t, store, r, c, cfg)
		createPlants(t, store, 1)
		advance(time.Second)
		if c.count("delivered") != 1 || pending(store, false) != 0 || c.count("status") != 4 {
			t.Fatalf("outcomes %v, %d pending", c.outcomes, pending(store, false))
		}
		// Each wait is at least half the doubled back-off: 5, 10, 20, 20 ms.
		for i, least := range []time.Duration{5, 10, 20, 20} {
			if gap := times[i+1].Sub(times[i]); gap < least*time.Millisecond {
				t.Errorf("attempt %d came %s after the one before; want at least %dms", i+2, gap, least)
			}
		}
	})
}

// An event is retried until it reaches its maximum age, the last attempt
// at that age whatever the back-off, and only then fails; a failed event is
// never attempted again until the operator redelivers it.
func TestAnEventPastItsMaximumAgeFailsAndCanBeRedelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		var down atomic.Bool
		down.Store(true)
		var (
			mu                sync.Mutex
			retryFrom, lastAt time.Time
		)
		r := &receiver{answer: func(e application.Event, _ int) error {
			mu.Lock()
			retryFrom, lastAt = e.RetryFrom, time.Now()
			mu.Unlock()
			if down.Load() {
				return &application.DeliveryError{Outcome: "refused", Detail: "connection refused"}
			}
			return nil
		}}
		c := &counts{}
		cfg := fast
		cfg.Poll, cfg.Retry.MaxAge = 5*time.Millisecond, 100*time.Millisecond
		start(t, store, r, c, cfg)
		createPlants(t, store, 1)
		advance(time.Second)
		if pending(store, true) != 1 {
			t.Fatalf("%d failed events; want the one", pending(store, true))
		}
		failed, _ := store.ListEvents(context.Background(), true, 10)
		attempts := r.attempts(failed[0].ID)
		if c.gaveUpCount() != 1 || failed[0].LastError == "" || attempts < 3 {
			t.Fatalf("gave up %d times after %d attempts, last error %q", c.gaveUpCount(), attempts, failed[0].LastError)
		}
		mu.Lock()
		window := lastAt.Sub(retryFrom)
		mu.Unlock()
		if window < cfg.Retry.MaxAge {
			t.Fatalf("the last attempt came %s into the event's life; want it at its maximum age, %s", window, cfg.Retry.MaxAge)
		}
		advance(10 * cfg.Retry.MaxAge) // two hundred polls
		if r.attempts(failed[0].ID) != attempts {
			t.Fatal("a failed event was attempted again")
		}
		down.Store(false)
		if n, err := store.Redeliver(context.Background(), time.Now(), nil); n != 1 || err != nil {
			t.Fatalf("redeliver: %d, %v", n, err)
		}
		advance(time.Second)
		if c.count("delivered") != 1 || pending(store, true)+pending(store, false) != 0 {
			t.Fatalf("outcomes %v after the redelivery; %d failed, %d pending", c.outcomes, pending(store, true), pending(store, false))
		}
	})
}

func TestAttemptsInFlightAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		release := make(chan struct{})
		r := &receiver{answer: func(application.Event, int) error { <-release; return nil }}
		c := &counts{}
		start(t, store, r, c, fast)
		createPlants(t, store, 20)
		advance(20 * time.Millisecond)
		if n := r.inFlight.Load(); n != 4 {
			t.Fatalf("%d attempts in flight; want the configured 4", n)
		}
		close(release)
		advance(time.Second)
		if c.count("delivered") != 20 {
			t.Fatalf("outcomes %v; want 20 delivered", c.outcomes)
		}
		if most := r.most.Load(); most != 4 {
			t.Fatalf("%d attempts ran at once; want the configured 4", most)
		}
	})
}

// Each receiver has its own slots: one that hangs with more events due than
// it has slots holds none of another's back.
func TestAHangingReceiverDoesNotHoldBackAnother(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const hangs = "http://hangs.example/hook"
		store := memory.New(hangs, "http://b.example/hook")
		release := make(chan struct{})
		defer close(release) // before the worker's cleanup, which waits for attempts
		r := &receiver{answer: func(e application.Event, _ int) error {
			if e.URL == hangs {
				<-release
			}
			return nil
		}}
		c := &counts{}
		createPlants(t, store, 10) // more than the 4 slots, for each receiver
		start(t, store, r, c, fast)
		synctest.Wait()
		if c.count("delivered") != 10 {
			t.Fatalf("outcomes %v; want every delivery to the receiver that answers", c.outcomes)
		}
		if n := r.inFlight.Load(); n != 4 {
			t.Fatalf("%d attempts hang; want the hanging receiver's own 4 slots full", n)
		}
	})
}

func TestAnUnreachableOutboxIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		createPlants(t, store, 3)
		var broken atomic.Bool
		broken.Store(true)
		store.Inject(func() error {
			if broken.Load() {
				return errors.Join(errors.New("down"), application.ErrUnavailable)
			}
			return nil
		})
		c := &counts{}
		cfg := fast
		cfg.Poll = 5 * time.Millisecond
		start(t, store, &receiver{}, c, cfg)
		advance(30 * time.Millisecond)
		broken.Store(false)
		advance(time.Second)
		if c.count("delivered") != 3 {
			t.Fatalf("outcomes %v; want 3 delivered once the outbox is back", c.outcomes)
		}
	})
}

// Waiting for half the slots is for a backlog: once the outbox ran dry, an
// event committed later takes a free slot at once, even the last one.
func TestAnEventAfterTheOutboxRanDryTakesTheLastFreeSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		release := make(chan struct{})
		defer close(release)
		r := &receiver{answer: func(application.Event, int) error { <-release; return nil }}
		start(t, store, r, &counts{}, fast)
		createPlants(t, store, 3)
		synctest.Wait()
		if n := r.inFlight.Load(); n != 3 {
			t.Fatalf("%d attempts; want three", n)
		}
		createPlant(t, store, 100)
		synctest.Wait()
		if n := r.inFlight.Load(); n != 4 {
			t.Fatalf("%d attempts; want a fourth at once", n)
		}
	})
}

// onlyReceivers is the outbox of a service configured with fewer receivers
// than its store has events for.
type onlyReceivers struct {
	*memory.Store
	urls []string
}

func (o onlyReceivers) Receivers() []string { return o.urls }

// An event whose URL was taken out of the receivers is kept, pending, and
// never sent, however long the worker runs; once the URL is configured
// again, it goes.
func TestEventsOfAReceiverNoLongerConfiguredWaitForIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const kept, removed = "http://kept.example/hook", "http://removed.example/hook"
		store := memory.New(kept, removed)
		createPlants(t, store, 3)
		r, c := &receiver{}, &counts{}
		w := start(t, onlyReceivers{Store: store, urls: []string{kept}}, r, c, fast)
		advance(3 * time.Hour) // past three polls
		w.Stop(context.Background())
		if r.attemptsTo(removed) != 0 || r.attemptsTo(kept) != 3 || pending(store, false) != 3 {
			t.Fatalf("%d attempts to the removed receiver, %d to the kept one, %d pending; want 0, 3, 3",
				r.attemptsTo(removed), r.attemptsTo(kept), pending(store, false))
		}
		start(t, store, r, c, fast)
		synctest.Wait()
		advance(time.Second)
		if r.attemptsTo(removed) != 3 || pending(store, false) != 0 {
			t.Fatalf("%d attempts to the receiver configured again, %d pending; want 3, 0", r.attemptsTo(removed), pending(store, false))
		}
	})
}

// A given-up event is logged with its receiver's URL as log lines show it:
// without the query or user information, where receivers take their tokens.
func TestAGivenUpEventIsLoggedWithoutTheReceiversToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://user:pw@a.example/hook?token=s3cret")
		var logs strings.Builder
		r := &receiver{answer: func(application.Event, int) error {
			return &application.DeliveryError{Outcome: "refused", Detail: "connection refused"}
		}}
		cfg := fast
		cfg.Retry.MaxAge = 100 * time.Millisecond
		w := dispatch.New(cfg, dispatch.Deps{Source: store, Sender: r, Log: slog.New(slog.NewTextHandler(&logs, nil))})
		w.Start()
		createPlants(t, store, 1)
		advance(time.Second)
		w.Stop(context.Background())
		out := logs.String()
		if !strings.Contains(out, "webhook event failed") || !strings.Contains(out, "url=http://a.example/hook ") ||
			strings.Contains(out, "s3cret") || strings.Contains(out, "user:pw") {
			t.Fatalf("log:\n%s", out)
		}
	})
}
