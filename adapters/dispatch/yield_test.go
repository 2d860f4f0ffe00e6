package dispatch_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/plantstore/plantstore/adapters/dispatch"
	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
)

// demand is the clients' load as a test sets it.
type demand struct{ n atomic.Int32 }

func (d *demand) InFlight() int { return int(d.n.Load()) }

// While clients keep the service busy, deliveries slow to one claim per
// pause; once the load drops they go at full speed, and every event
// arrives.
func TestDeliveriesGiveWayToBusyClients(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		clients := &demand{}
		clients.n.Store(16)
		release := make(chan struct{})
		r := &receiver{answer: func(application.Event, int) error { <-release; return nil }}
		c := &counts{}
		cfg := fast
		cfg.YieldAt, cfg.YieldPause = 16, time.Hour
		createPlants(t, store, 20) // before the first claim, so that it fills every slot
		w := dispatch.New(cfg, dispatch.Deps{Source: store, Sender: r, Observer: c, Clients: clients})
		w.Start()
		t.Cleanup(func() { w.Stop(context.Background()) })
		releaseAll := sync.OnceFunc(func() { close(release) })
		// Runs before the worker's cleanup: a stop waits for the attempts.
		t.Cleanup(releaseAll)
		// One claim of every slot, then none while the pause lasts.
		synctest.Wait()
		if n := r.inFlight.Load(); n != 4 {
			t.Fatalf("%d attempts in flight; want a claim of every slot", n)
		}
		for range 4 {
			release <- struct{}{}
		}
		createPlant(t, store, 100) // a commit, which the worker looks at
		advance(time.Minute)
		if n := c.count("delivered"); n != 4 || r.inFlight.Load() != 0 {
			t.Fatalf("%d delivered and %d in flight while the clients were busy; want one claim of 4, then none", n, r.inFlight.Load())
		}
		clients.n.Store(15)
		createPlant(t, store, 101)
		synctest.Wait()
		if n := r.inFlight.Load(); n != 4 {
			t.Fatalf("%d attempts in flight once the load dropped; want every slot", n)
		}
		releaseAll()
		advance(time.Second)
		if c.count("delivered") != 22 || pending(store, false) != 0 {
			t.Fatalf("outcomes %v, %d pending; want every delivery", c.outcomes, pending(store, false))
		}
	})
}

// While clients keep the service busy, an attempt that hangs holds its own
// slot only: the next claims, a pause apart, take the other events.
func TestAHangingAttemptDoesNotHoldBackDeliveriesThatGiveWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		clients := &demand{}
		clients.n.Store(16)
		release := make(chan struct{})
		defer close(release) // before the worker's cleanup, which waits for attempts
		r := &receiver{answer: func(e application.Event, _ int) error {
			if e.PlantID == 0 {
				<-release
			}
			return nil
		}}
		c := &counts{}
		cfg := fast
		cfg.YieldAt, cfg.YieldPause = 16, 5*time.Millisecond
		createPlant(t, store, 0) // the first claim takes the hanging one alone
		w := dispatch.New(cfg, dispatch.Deps{Source: store, Sender: r, Observer: c, Clients: clients})
		w.Start()
		t.Cleanup(func() { w.Stop(context.Background()) })
		synctest.Wait()
		if n := r.inFlight.Load(); n != 1 {
			t.Fatalf("%d attempts in flight; want the hanging one", n)
		}
		for id := range int64(20) {
			createPlant(t, store, id+1)
		}
		advance(time.Second)
		if c.count("delivered") != 20 {
			t.Fatalf("outcomes %v; want the 20 other deliveries", c.outcomes)
		}
	})
}

// claimCounter is an event source that records the limit of every claim
// and how many events it found.
type claimCounter struct {
	*memory.Store
	mu            sync.Mutex
	limits, found []int
}

func (c *claimCounter) ClaimDue(ctx context.Context, url string, now time.Time, lease time.Duration, limit int) ([]application.Event, error) {
	events, err := c.Store.ClaimDue(ctx, url, now, lease, limit)
	c.mu.Lock()
	c.limits, c.found = append(c.limits, limit), append(c.found, len(events))
	c.mu.Unlock()
	return events, err
}

// Attempts that end one by one do not make one claim each: a claim is a
// statement, so while more events are due than slots are free, the worker
// claims again once half its slots are free.
func TestClaimsComeInChunks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New("http://a.example/hook")
		source := &claimCounter{Store: store}
		step := make(chan struct{})
		r := &receiver{answer: func(application.Event, int) error { <-step; return nil }}
		c := &counts{}
		start(t, source, r, c, fast)
		createPlants(t, store, 20)
		for range 20 {
			step <- struct{}{} // ends one attempt
		}
		advance(time.Second)
		if c.count("delivered") != 20 {
			t.Fatalf("outcomes %v; want 20 delivered", c.outcomes)
		}
		source.mu.Lock()
		defer source.mu.Unlock()
		for i := 1; i < len(source.limits); i++ {
			backlog := source.found[i-1] == source.limits[i-1] // the claim before filled every free slot
			if backlog && source.limits[i] < fast.Concurrency/2 {
				t.Fatalf("claims asked for %v events and found %v; want at least %d after a full claim",
					source.limits, source.found, fast.Concurrency/2)
			}
		}
	})
}
