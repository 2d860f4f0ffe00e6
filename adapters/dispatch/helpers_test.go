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
	"github.com/plantstore/plantstore/domain"
)

// Every test runs in a testing/synctest bubble: time is the bubble's fake
// clock, which moves only when every goroutine of the bubble waits, so the
// worker's timers, back-offs and timeouts take no real time, and
// synctest.Wait says when nothing more can happen without time passing.

// fast is a configuration on the scale of a test: four slots per receiver,
// and polls an hour apart, so that only commits and retries wake the
// worker.
var fast = dispatch.Config{
	Concurrency: 4,
	Timeout:     time.Second,
	Retry:       application.RetryPolicy{RetryMin: 10 * time.Millisecond, RetryMax: 40 * time.Millisecond},
	Poll:        time.Hour,
}

// advance moves the bubble's clock by d, letting every timer due meanwhile
// fire, and returns once the bubble waits again. No real time passes.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// receiver stands in for the HTTP sender: it records each attempt and
// answers by a script.
type receiver struct {
	mu        sync.Mutex
	got       map[string]int // attempts per event id
	urls      map[string]int // attempts per receiver URL
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
		r.got, r.urls = map[string]int{}, map[string]int{}
	}
	r.got[e.ID]++
	r.urls[e.URL]++
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

func (r *receiver) attemptsTo(url string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.urls[url]
}

// counts is an Observer that counts.
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

func (c *counts) count(outcome string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outcomes[outcome]
}

func (c *counts) gaveUpCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gaveUp
}

// start runs a worker on source until the test ends.
func start(t *testing.T, source application.EventSource, r *receiver, c *counts, cfg dispatch.Config) *dispatch.Worker {
	t.Helper()
	w := dispatch.New(cfg, dispatch.Deps{Source: source, Sender: r, Observer: c})
	w.Start()
	t.Cleanup(func() { w.Stop(context.Background()) })
	return w
}

// stopping stops w with a grace period that ends when the returned cancel
// is called; done is closed once Stop returned.
func stopping(w *dispatch.Worker) (cancel func(), done <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); w.Stop(ctx) }()
	return cancel, stopped
}

func pending(s *memory.Store, failed bool) int {
	events, _ := s.ListEvents(context.Background(), failed, 1000)
	return len(events)
}

var (
	scopes = application.Scopes{Read: "plants:read", Write: "plants:write"}
	writer = application.Principal{Subject: "alice", Scopes: []string{"plants:write"}}
)

// createPlant stores plant id, which commits one event per receiver.
func createPlant(t *testing.T, s *memory.Store, id int64) {
	t.Helper()
	np, err := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: "Ivy"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := application.NewCreatePlant(s, scopes).Create(context.Background(), writer, np); err != nil {
		t.Fatal(err)
	}
}

// createPlants stores plants 0 to n-1.
func createPlants(t *testing.T, s *memory.Store, n int) {
	t.Helper()
	for i := range n {
		createPlant(t, s, int64(i))
	}
}
