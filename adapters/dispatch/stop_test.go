package dispatch_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/plantstore/plantstore/adapters/dispatch"
	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
)

// A stop lets the attempts in flight finish; the end of its grace period
// cuts them short and settles them as failed attempts, so that a later
// worker sends them.
func TestAStopLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		release := make(chan struct{})
		r := &receiver{}
		r.answerCtx = func(ctx context.Context, attempt int) error {
			if attempt == 1 {
				select {
				case <-release:
				case <-ctx.Done():
					return &application.DeliveryError{Outcome: "timeout", Detail: "cut short"}
				}
			}
			return nil
		}
		c := &counts{}
		w := dispatch.New(fast, dispatch.Deps{Source: store, Sender: r, Observer: c})
		w.Start()
		createPlants(t, store, 6)
		synctest.Wait()
		if n := r.inFlight.Load(); n != 4 {
			t.Fatalf("%d attempts in flight; want 4", n)
		}
		endGrace, stopped := stopping(w)
		advance(fast.Timeout / 2)
		select {
		case <-stopped:
			t.Fatal("the worker stopped with attempts in flight")
		default:
		}
		endGrace()
		<-stopped
		if c.count("delivered") != 0 || c.count("timeout") != 4 {
			t.Fatalf("outcomes %v; want the 4 attempts cut short", c.outcomes)
		}
		close(release)
		again := &counts{}
		cfg := fast
		cfg.Poll = 5 * time.Millisecond
		start(t, store, r, again, cfg)
		advance(time.Second)
		if again.count("delivered") != 6 || pending(store, false) != 0 {
			t.Fatalf("outcomes %v after the restart, %d pending; want every delivery", again.outcomes, pending(store, false))
		}
	})
}

// A stop whose grace period is longer than the attempts' timeout ends with
// the attempts, which their timeout ends: it never waits longer.
func TestAStopWaitsNoLongerThanTheAttemptsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		r := &receiver{answerCtx: func(ctx context.Context, _ int) error {
			<-ctx.Done()
			return &application.DeliveryError{Outcome: "timeout", Detail: "no answer in time"}
		}}
		c := &counts{}
		w := dispatch.New(fast, dispatch.Deps{Source: store, Sender: r, Observer: c})
		w.Start()
		createPlants(t, store, 2)
		synctest.Wait()
		began := time.Now()
		w.Stop(context.Background())
		if took := time.Since(began); took > fast.Timeout {
			t.Fatalf("the stop took %s; want at most the attempts' timeout, %s", took, fast.Timeout)
		}
		if c.count("timeout") != 2 || c.gaveUpCount() != 0 || pending(store, false) != 2 {
			t.Fatalf("outcomes %v, %d pending", c.outcomes, pending(store, false))
		}
	})
}

// A last attempt at the event's maximum age that a stop cuts short does not
// fail the event: the receiver never had its chance, so it is retried.
func TestAnAbortedLastAttemptDoesNotFailTheEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		cfg := fast
		cfg.Poll, cfg.Retry.MaxAge = 5*time.Millisecond, 60*time.Millisecond
		created := time.Now() // the event's RetryFrom: no time passes before the create
		r := &receiver{answerCtx: func(ctx context.Context, _ int) error {
			if time.Since(created) < cfg.Retry.MaxAge {
				return &application.DeliveryError{Outcome: "refused", Detail: "connection refused"}
			}
			<-ctx.Done() // the last attempt hangs until the stop cuts it short
			return &application.DeliveryError{Outcome: "timeout", Detail: "cut short"}
		}}
		c := &counts{}
		w := dispatch.New(cfg, dispatch.Deps{Source: store, Sender: r, Observer: c})
		w.Start()
		createPlants(t, store, 1)
		advance(cfg.Retry.MaxAge + 10*time.Millisecond)
		if r.inFlight.Load() != 1 || c.count("refused") < 2 {
			t.Fatalf("%d in flight, outcomes %v; want the last attempt in flight after at least 2 refusals", r.inFlight.Load(), c.outcomes)
		}
		endGrace, stopped := stopping(w)
		endGrace()
		<-stopped
		if c.gaveUpCount() != 0 || pending(store, true) != 0 || pending(store, false) != 1 {
			t.Fatalf("gave up %d times; %d failed and %d pending events; want the event pending", c.gaveUpCount(), pending(store, true), pending(store, false))
		}
	})
}

// A worker whose start never came (another part of the service failed to
// start first) stops at once.
func TestAWorkerNeverStartedStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := dispatch.New(fast, dispatch.Deps{Source: memory.New("http://a.example/hook"), Sender: &receiver{}})
		w.Stop(context.Background())
	})
}

// A worker with no receiver configured sends nothing, even with events of
// an earlier configuration left in the outbox, and stops at once.
func TestAWorkerWithoutReceiversSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		createPlants(t, store, 3)
		r := &receiver{}
		w := start(t, onlyReceivers{Store: store}, r, &counts{}, fast)
		advance(time.Hour)
		w.Stop(context.Background())
		if r.most.Load() != 0 || pending(store, false) != 3 {
			t.Fatalf("at most %d attempts at once, %d events pending; want none sent, 3 pending", r.most.Load(), pending(store, false))
		}
	})
}

// stalledSettles is an event source whose settlements never complete once
// stalled, as a store whose link stalls: each waits until its context ends.
type stalledSettles struct {
	*memory.Store
	stalled atomic.Bool
}

func (s *stalledSettles) Settle(ctx context.Context, outcomes []application.Settlement) error {
	if s.stalled.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.Settle(ctx, outcomes)
}

// With the store stalled, the attempts a stop cut short at the end of its
// grace period are settled within a second, not within the attempts'
// timeout: the stop ends a second after the grace period at most, and the
// events stay claimed, to be sent again when the lease ends.
func TestAStopWithTheStoreStalledEndsASecondAfterItsGracePeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &stalledSettles{Store: memory.New("http://a.example/hook")}
		r := &receiver{answerCtx: func(ctx context.Context, _ int) error {
			<-ctx.Done()
			return &application.DeliveryError{Outcome: "timeout", Detail: "cut short"}
		}}
		cfg := fast
		cfg.Timeout = 30 * time.Second
		w := dispatch.New(cfg, dispatch.Deps{Source: store, Sender: r, Observer: &counts{}})
		w.Start()
		createPlants(t, store.Store, 2)
		synctest.Wait()
		store.stalled.Store(true)
		endGrace, stopped := stopping(w)
		endGrace()
		began := time.Now()
		<-stopped
		if took := time.Since(began); took > time.Second {
			t.Fatalf("the stop took %s after its grace period; want a second at most, not the attempts' timeout (%s)", took, cfg.Timeout)
		}
		if pending(store.Store, false) != 2 {
			t.Fatalf("%d events pending; want both, still claimed", pending(store.Store, false))
		}
	})
}
