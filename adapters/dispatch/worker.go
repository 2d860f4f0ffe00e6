package dispatch

import (
	"context"
	"log/slog"
	"sync"

	"go.opentelemetry.io/otel/trace"
)

// Worker delivers the outbox's events from Start to Stop.
type Worker struct {
	deps   Deps
	cfg    Config
	tracer trace.Tracer // nil when tracing is off

	stop      context.CancelFunc // ends the claims; nil until Start
	done      chan struct{}      // closed once run has returned
	abortOnce sync.Once
	abort     chan struct{} // closed by Stop at the end of its grace period
}

// New returns a worker; Start starts it.
func New(cfg Config, deps Deps) *Worker {
	if deps.Observer == nil {
		deps.Observer = nobody{}
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	return &Worker{deps: deps, cfg: cfg.withDefaults(), tracer: newTracer(deps.Tracing), done: make(chan struct{}), abort: make(chan struct{})}
}

// Start runs the worker in the background until Stop. Call it once.
func (w *Worker) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.stop = cancel
	go func() { defer close(w.done); w.run(ctx) }()
}

// Stop stops claiming, lets the attempts in flight finish within their
// timeout or until ctx ends, whichever comes first, settles them, and
// returns. Attempts still running when ctx ends are cut short: they are
// settled as failed attempts, never as failed events, and retried later.
// A worker that was never started has nothing to stop.
func (w *Worker) Stop(ctx context.Context) {
	if w.stop == nil {
		return
	}
	w.stop()
	select {
	case <-w.done:
	case <-ctx.Done():
		w.abortOnce.Do(func() { close(w.abort) })
		<-w.done
	}
}

// run dispatches until ctx ends, then waits for the attempts in flight and
// their settlements.
//
// Each receiver has its own claims and its own Concurrency slots, so that
// one that hangs until the timeout holds only its own events back.
func (w *Worker) run(ctx context.Context) {
	receivers := w.deps.Source.Receivers()
	if len(receivers) == 0 {
		return // the store keeps no events
	}
	settled := make(chan settling, w.cfg.Concurrency*len(receivers))
	settler := make(chan struct{})
	go func() { defer close(settler); w.settle(settled) }()

	// Attempts outlive ctx by their own timeout, so that a stop does not cut
	// a delivery that is about to succeed; an abort cuts them.
	attempts, cancelAttempts := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelAttempts()
	go func() {
		select {
		case <-w.abort:
			cancelAttempts()
		case <-attempts.Done():
		}
	}()

	// A commit stores events for every receiver: it wakes each one's loop.
	wake := make([]chan struct{}, len(receivers))
	var loops sync.WaitGroup
	for i, url := range receivers {
		wake[i] = make(chan struct{}, 1)
		loops.Go(func() { w.deliver(ctx, attempts, url, wake[i], settled) })
	}
	loops.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.deps.Source.Committed():
				for _, c := range wake {
					select {
					case c <- struct{}{}:
					default:
					}
				}
			}
		}
	})
	loops.Wait()
	close(settled)
	<-settler
}

// yielding reports whether the clients' demand asks deliveries to give way.
func (w *Worker) yielding() bool {
	return w.deps.Clients != nil && w.cfg.YieldAt > 0 && w.deps.Clients.InFlight() >= w.cfg.YieldAt
}
