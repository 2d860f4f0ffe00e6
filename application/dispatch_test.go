package application_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
)

// receiver stands in for the HTTP sender: it records each attempt and
// answers by a script.
type receiver struct {
	mu        sync.Mutex
	got       map[string]int // attempts per event id
	answer    func(e application.Event, attempt int) error
	answerCtx func(ctx context.Context, attempt int) error
	inFlight  atomic.Int32
	most      atomic.Int32
}

func (r *receiver) Send(ctx context.Context, e application.Event) error {
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	for m := r.most.Load(); n > m && !r.most.CompareAndSwap(m, n); m = r.most.Load() {
	}
	r.mu.Lock()
	if r.got == nil {
		r.got = map[string]int{}
	}
	r.got[e.ID]++
	attempt := r.got[e.ID]
	r.mu.Unlock()
	switch {
	case r.answerCtx != nil:
		return r.answerCtx(ctx, attempt)
	case r.answer != nil:
		return r.answer(e, attempt)
	}
	return nil
}

func (r *receiver) attempts(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[id]
}

// counts is a DispatchObserver that counts.
type counts struct {
	mu       sync.Mutex
	outcomes map[string]int
	gaveUp   int
}

func (c *counts) Attempted(outcome string, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.outcomes == nil {
		c.outcomes = map[string]int{}
	}
	c.outcomes[outcome]++
}

func (c *counts) GaveUp() { c.mu.Lock(); c.gaveUp++; c.mu.Unlock() }

// fast is a configuration on the scale of a test.
var fast = application.DispatchConfig{Concurrency: 4, Timeout: time.Second, RetryMin: 10 * time.Millisecond, RetryMax: 40 * time.Millisecond, Poll: time.Hour}

// dispatch runs a dispatcher until the test ends.
func dispatch(t *testing.T, store *memory.Store, r *receiver, c *counts, cfg application.DispatchConfig) *application.Dispatcher {
	t.Helper()
	d, stop, done := run(store, r, c, cfg)
	t.Cleanup(func() { stop(); <-done })
	return d
}

// run starts a dispatcher; stop ends its Run, which closes done once it
// has returned.
func run(store *memory.Store, r *receiver, c *counts, cfg application.DispatchConfig) (d *application.Dispatcher, stop func(), done <-chan struct{}) {
	d = application.NewDispatcher(store, r, application.SystemClock{}, c, slog.New(slog.NewTextHandler(io.Discard, nil)), cfg)
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() { defer close(finished); d.Run(ctx) }()
	return d, cancel, finished
}

// eventually waits for cond, failing the test after a few seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
	}
}

func pending(s *memory.Store, failed bool) int {
	events, _ := s.ListEvents(context.Background(), failed, 1000)
	return len(events)
}

func createPlants(t *testing.T, s *memory.Store, n int) {
	t.Helper()
	uc := application.NewCreatePlant(s, scopes)
	for i := range n {
		if _, _, err := uc.Create(context.Background(), writer, newPlant(t, int64(i), "Ivy", nil)); err != nil {
			t.Fatal(err)
		}
	}
}

func createPlant(t *testing.T, s *memory.Store, id int64) {
	t.Helper()
	if _, _, err := application.NewCreatePlant(s, scopes).Create(context.Background(), writer, newPlant(t, id, "Ivy", nil)); err != nil {
		t.Fatal(err)
	}
}

func TestEveryStoredPlantIsAnnouncedToEveryReceiverOnce(t *testing.T) {
	store := memory.New("http://a.example/hook", "http://b.example/hook")
	r, c := &receiver{}, &counts{}
	dispatch(t, store, r, c, fast) // polls hourly: only the commit signal wakes it
	createPlants(t, store, 50)
	// A replay and a conflict store nothing, so announce nothing.
	createPlants(t, store, 1)
	eventually(t, "every delivery", func() bool { return pending(store, false) == 0 && c.count("delivered") == 100 })
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
}

func (c *counts) count(outcome string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outcomes[outcome]
}

func TestAFailingReceiverIsRetriedUntilItRecovers(t *testing.T) {
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
	dispatch(t, store, r, c, cfg)
	createPlants(t, store, 1)
	eventually(t, "the delivery", func() bool { return c.count("delivered") == 1 && pending(store, false) == 0 })
	if c.count("status") != 4 {
		t.Fatalf("outcomes %v, %d pending", c.outcomes, pending(store, false))
	}
	// Each wait is at least half the doubled back-off: 5, 10, 20, 20 ms.
	for i, least := range []time.Duration{5, 10, 20, 20} {
		if gap := times[i+1].Sub(times[i]); gap < least*time.Millisecond {
			t.Errorf("attempt %d came %s after the one before; want at least %dms", i+2, gap, least)
		}
	}
}

// An event is retried until it reaches its maximum age, the last attempt
// at that age whatever the back-off, and only then fails.
func TestAnEventPastItsMaximumAgeFailsAndCanBeRedelivered(t *testing.T) {
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
	cfg.Poll, cfg.MaxAge = 5*time.Millisecond, 100*time.Millisecond
	dispatch(t, store, r, c, cfg)
	createPlants(t, store, 1)
	eventually(t, "the failure", func() bool { return pending(store, true) == 1 })
	failed, _ := store.ListEvents(context.Background(), true, 10)
	attempts := r.attempts(failed[0].ID)
	if c.gaveUp != 1 || failed[0].LastError == "" || attempts < 3 {
		t.Fatalf("gave up %d times after %d attempts, last error %q", c.gaveUp, attempts, failed[0].LastError)
	}
	mu.Lock()
	window := lastAt.Sub(retryFrom)
	mu.Unlock()
	if window < cfg.MaxAge {
		t.Fatalf("the last attempt came %s into the event's life; want it at its maximum age, %s", window, cfg.MaxAge)
	}
	time.Sleep(100 * time.Millisecond)
	if r.attempts(failed[0].ID) != attempts {
		t.Fatal("a failed event was attempted again")
	}
	down.Store(false)
	if n, err := store.Redeliver(context.Background(), time.Now(), nil); n != 1 || err != nil {
		t.Fatalf("redeliver: %d, %v", n, err)
	}
	eventually(t, "the redelivery", func() bool { return c.count("delivered") == 1 && pending(store, true)+pending(store, false) == 0 })
}

func TestAttemptsInFlightAreBounded(t *testing.T) {
	store := memory.New("http://a.example/hook")
	release := make(chan struct{})
	r := &receiver{answer: func(application.Event, int) error { <-release; return nil }}
	c := &counts{}
	dispatch(t, store, r, c, fast)
	createPlants(t, store, 20)
	eventually(t, "a full set of attempts", func() bool { return r.inFlight.Load() == 4 })
	time.Sleep(20 * time.Millisecond)
	close(release)
	eventually(t, "every delivery", func() bool { return c.count("delivered") == 20 })
	if most := r.most.Load(); most != 4 {
		t.Fatalf("%d attempts ran at once; want the configured 4", most)
	}
}

// Each receiver has its own slots: one that hangs with more events due than
// it has slots holds none of another's back.
func TestAHangingReceiverDoesNotHoldBackAnother(t *testing.T) {
	const hangs = "http://hangs.example/hook"
	store := memory.New(hangs, "http://b.example/hook")
	release := make(chan struct{})
	defer close(release) // before the dispatcher's cleanup, which waits for attempts
	r := &receiver{answer: func(e application.Event, _ int) error {
		if e.URL == hangs {
			<-release
		}
		return nil
	}}
	c := &counts{}
	createPlants(t, store, 10) // more than the 4 slots, for each receiver
	dispatch(t, store, r, c, fast)
	eventually(t, "every delivery to the receiver that answers", func() bool { return c.count("delivered") == 10 })
	if n := r.inFlight.Load(); n != 4 {
		t.Fatalf("%d attempts hang; want the hanging receiver's own 4 slots full", n)
	}
}

// demand is the clients' load as a test sets it.
type demand struct{ n atomic.Int32 }

func (d *demand) InFlight() int { return int(d.n.Load()) }

// While clients keep the service busy, deliveries slow to one claim per
// pause; once the load drops they go at full speed, and every event
// arrives.
func TestDeliveriesGiveWayToBusyClients(t *testing.T) {
	store := memory.New("http://a.example/hook")
	clients := &demand{}
	clients.n.Store(16)
	release := make(chan struct{})
	r := &receiver{answer: func(application.Event, int) error { <-release; return nil }}
	c := &counts{}
	cfg := fast
	cfg.Clients, cfg.YieldAt, cfg.YieldPause = clients, 16, time.Hour
	createPlants(t, store, 20) // before the first claim, so that it fills every slot
	d := application.NewDispatcher(store, r, application.SystemClock{}, c, slog.New(slog.NewTextHandler(io.Discard, nil)), cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	releaseAll := sync.OnceFunc(func() { close(release) })
	// Runs before the dispatcher's cleanup: a stop waits for the attempts.
	t.Cleanup(releaseAll)
	// One claim of every slot, then none while the pause lasts.
	eventually(t, "a claim", func() bool { return r.inFlight.Load() == 4 })
	for range 4 {
		release <- struct{}{}
	}
	eventually(t, "the claimed deliveries", func() bool { return c.count("delivered") == int(r.most.Load()) })
	createPlant(t, store, 100) // a commit, which the dispatcher looks at
	time.Sleep(50 * time.Millisecond)
	if n := c.count("delivered"); n > 4 || r.inFlight.Load() != 0 {
		t.Fatalf("%d delivered and %d in flight while the clients were busy; want one claim of at most 4, then none", n, r.inFlight.Load())
	}
	clients.n.Store(15)
	createPlant(t, store, 101)
	eventually(t, "a full set of attempts once the load dropped", func() bool { return r.inFlight.Load() == 4 })
	releaseAll()
	eventually(t, "every delivery", func() bool { return c.count("delivered") == 22 && pending(store, false) == 0 })
}

// While clients keep the service busy, an attempt that hangs holds its own
// slot only: the next claims, a pause apart, take the other events.
func TestAHangingAttemptDoesNotHoldBackDeliveriesThatGiveWay(t *testing.T) {
	store := memory.New("http://a.example/hook")
	clients := &demand{}
	clients.n.Store(16)
	release := make(chan struct{})
	defer close(release) // before the dispatcher's cleanup, which waits for attempts
	r := &receiver{answer: func(e application.Event, _ int) error {
		if e.Plant.ID() == 0 {
			<-release
		}
		return nil
	}}
	c := &counts{}
	cfg := fast
	cfg.Clients, cfg.YieldAt, cfg.YieldPause = clients, 16, 5*time.Millisecond
	createPlant(t, store, 0) // the first claim takes the hanging one alone
	dispatch(t, store, r, c, cfg)
	eventually(t, "the hanging attempt", func() bool { return r.inFlight.Load() == 1 })
	for id := range int64(20) {
		createPlant(t, store, id+1)
	}
	eventually(t, "the other deliveries", func() bool { return c.count("delivered") == 20 })
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
// statement, so while more events are due than slots are free, the
// dispatcher claims again once half its slots are free.
func TestClaimsComeInChunks(t *testing.T) {
	store := memory.New("http://a.example/hook")
	source := &claimCounter{Store: store}
	step := make(chan struct{})
	r := &receiver{answer: func(application.Event, int) error { <-step; return nil }}
	c := &counts{}
	d := application.NewDispatcher(source, r, application.SystemClock{}, c, slog.New(slog.NewTextHandler(io.Discard, nil)), fast)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); close(step); <-done })
	createPlants(t, store, 20)
	for range 20 {
		step <- struct{}{} // ends one attempt
	}
	eventually(t, "every delivery", func() bool { return c.count("delivered") == 20 })
	source.mu.Lock()
	defer source.mu.Unlock()
	for i := 1; i < len(source.limits); i++ {
		backlog := source.found[i-1] == source.limits[i-1] // the claim before filled every free slot
		if backlog && source.limits[i] < fast.Concurrency/2 {
			t.Fatalf("claims asked for %v events and found %v; want at least %d after a full claim",
				source.limits, source.found, fast.Concurrency/2)
		}
	}
}

// A stop lets the attempts in flight finish; an abort cuts them short and
// settles them as failed attempts, so that a later dispatcher sends them.
func TestAStopLosesNothing(t *testing.T) {
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
	d, stop, done := run(store, r, c, fast)
	createPlants(t, store, 6)
	eventually(t, "attempts in flight", func() bool { return r.inFlight.Load() == 4 })
	stop()
	select {
	case <-done:
		t.Fatal("the dispatcher returned with attempts in flight")
	case <-time.After(50 * time.Millisecond):
	}
	d.Abort()
	<-done
	if c.count("delivered") != 0 {
		t.Fatalf("outcomes %v; want none delivered yet", c.outcomes)
	}
	close(release)
	again := &counts{}
	cfg := fast
	cfg.Poll = 5 * time.Millisecond
	dispatch(t, store, r, again, cfg)
	eventually(t, "every delivery after the restart", func() bool { return again.count("delivered") == 6 && pending(store, false) == 0 })
}

// A last attempt at the event's maximum age that a stop cuts short does not
// fail the event: the receiver never had its chance, so it is retried.
func TestAnAbortedLastAttemptDoesNotFailTheEvent(t *testing.T) {
	store := memory.New("http://a.example/hook")
	cfg := fast
	cfg.Poll, cfg.MaxAge = 5*time.Millisecond, 60*time.Millisecond
	created := time.Now() // at most the event's RetryFrom
	r := &receiver{answerCtx: func(ctx context.Context, _ int) error {
		if time.Since(created) < cfg.MaxAge {
			return &application.DeliveryError{Outcome: "refused", Detail: "connection refused"}
		}
		<-ctx.Done() // the last attempt hangs until Abort
		return &application.DeliveryError{Outcome: "timeout", Detail: "cut short"}
	}}
	c := &counts{}
	d, stop, done := run(store, r, c, cfg)
	createPlants(t, store, 1)
	eventually(t, "the last attempt in flight", func() bool { return r.inFlight.Load() == 1 && c.count("refused") >= 2 })
	stop()
	d.Abort()
	<-done
	if c.gaveUp != 0 || pending(store, true) != 0 || pending(store, false) != 1 {
		t.Fatalf("gave up %d times; %d failed and %d pending events; want the event pending", c.gaveUp, pending(store, true), pending(store, false))
	}
}

func TestAnUnreachableOutboxIsRetried(t *testing.T) {
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
	dispatch(t, store, &receiver{}, c, cfg)
	time.Sleep(30 * time.Millisecond)
	broken.Store(false)
	eventually(t, "every delivery", func() bool { return c.count("delivered") == 3 })
}

// Waiting for half the slots is for a backlog: once the outbox ran dry, an
// event committed later takes a free slot at once, even the last one.
func TestAnEventAfterTheOutboxRanDryTakesTheLastFreeSlot(t *testing.T) {
	store := memory.New("http://a.example/hook")
	release := make(chan struct{})
	defer close(release)
	r := &receiver{answer: func(application.Event, int) error { <-release; return nil }}
	dispatch(t, store, r, &counts{}, fast)
	createPlants(t, store, 3)
	eventually(t, "three attempts", func() bool { return r.inFlight.Load() == 3 })
	uc := application.NewCreatePlant(store, scopes)
	if _, _, err := uc.Create(context.Background(), writer, newPlant(t, 100, "Ivy", nil)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a fourth attempt", func() bool { return r.inFlight.Load() == 4 })
}
