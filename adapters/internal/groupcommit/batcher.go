package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"
)

// ErrClosed is returned by Submit once Close has been called.
var ErrClosed = errors.New("groupcommit: batcher is closed")

// Result is the outcome of one item of a batch.
type Result[R any] struct {
	Value R
	Err   error
}

// ErrOverloaded is returned by Submit, at once, when as many items wait to
// be taken into a batch as the queue holds: the store is behind, and a new
// item would only wait for its deadline.
var ErrOverloaded = errors.New("groupcommit: too many items waiting")

// ErrOutcomeUnknown is returned, with the context's error, by Submit whose
// context ended while its item was being flushed: the flush may yet commit
// it, or not.
var ErrOutcomeUnknown = errors.New("groupcommit: gave up while the batch was in flight")

// Request states. A request is queued until a writer takes it into a batch
// or its submitter gives up on it; a taken one is answered, or its
// submitter leaves first. The compare-and-swaps between submitter and writer
// decide whether the item is flushed, and who recycles the request.
const (
	stateQueued int32 = iota
	stateTaken
	stateAbandoned // given up before a writer took it: never flushed
	stateAnswered  // the writer sent its result
	stateLeft      // given up while its batch was in flight
)

type request[T, R any] struct {
	item  T
	span  trace.Span // the submitter's, when sampled
	state atomic.Int32
	done  chan Result[R] // buffered 1, reused with the request
}

// Batcher runs a flush function over batches of concurrently submitted items.
// It is safe for concurrent use. Build one with New and stop it with Close.
type Batcher[T, R any] struct {
	cfg   Config
	flush func(ctx context.Context, batch []T) []Result[R]
	queue chan *request[T, R]
	pool  sync.Pool

	// mu guards closed and the closing of queue: Submit sends under the
	// read lock so that Close never closes the channel under a sender.
	mu     sync.RWMutex
	closed bool

	ctx     context.Context // parent of every flush context; not any submitter's
	cancel  context.CancelFunc
	writers sync.WaitGroup
	limit   *limit
	shed    atomic.Uint64
}

// New starts a Batcher with cfg.MaxWriters writer goroutines calling flush,
// as many at once as its limit allows (see limit).
//
// flush receives a batch in submission order and must return exactly
// len(batch) results, result i answering batch[i]; any other count is a
// programming error and panics the writer. An Err on one result fails that
// item only; to fail a whole batch, set the same error on every result. The
// batch slice is reused after flush returns, so flush must not keep it. The
// context flush receives belongs to the Batcher, not to any submitter: one
// client giving up never fails the items committed alongside it.
func New[T, R any](cfg Config, flush func(ctx context.Context, batch []T) []Result[R]) *Batcher[T, R] {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	b := &Batcher[T, R]{
		cfg:    cfg,
		flush:  flush,
		queue:  make(chan *request[T, R], cfg.MaxQueued),
		ctx:    ctx,
		cancel: cancel,
		limit:  newLimit(cfg.MaxWriters),
	}
	b.pool.New = func() any { return &request[T, R]{done: make(chan Result[R], 1)} }
	b.writers.Add(cfg.MaxWriters)
	for range cfg.MaxWriters {
		go b.write()
	}
	return b
}

// Submit queues item and blocks until the batch holding it has been flushed,
// then returns the item's result. It never waits past ctx: if ctx ends
// before a writer took the item, Submit returns ctx.Err() and the item is
// never flushed; if it ends while the item's batch is in flight, Submit
// returns ErrOutcomeUnknown with ctx.Err(), and the flush goes on without
// it. When the queue is full it returns ErrOverloaded at once, and after
// Close, ErrClosed.
func (b *Batcher[T, R]) Submit(ctx context.Context, item T) (R, error) {
	var zero R
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	r := b.pool.Get().(*request[T, R])
	r.item = item
	r.span = submitter(ctx)
	r.state.Store(stateQueued)

	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		b.release(r)
		return zero, ErrClosed
	}
	select {
	case b.queue <- r:
		b.mu.RUnlock()
	default:
		b.mu.RUnlock()
		b.release(r)
		b.shed.Add(1)
		return zero, ErrOverloaded
	}

	select {
	case res := <-r.done:
		b.release(r)
		return res.Value, res.Err
	case <-ctx.Done():
		if r.state.CompareAndSwap(stateQueued, stateAbandoned) {
			// The writer that meets r drops it and recycles it.
			return zero, ctx.Err()
		}
		if r.state.CompareAndSwap(stateTaken, stateLeft) {
			// The writer that answers r recycles it.
			return zero, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
		}
		res := <-r.done // answered meanwhile
		b.release(r)
		return res.Value, res.Err
	}
}

// Queued returns how many items wait to be taken into a batch. It is a
// snapshot for metrics: a growing queue means the store commits slower than
// clients submit.
func (b *Batcher[T, R]) Queued() int { return len(b.queue) }

// Close stops accepting items, flushes every item already queued, and waits
// for the writers to finish. It is safe to call more than once.
func (b *Batcher[T, R]) Close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.queue)
	}
	b.mu.Unlock()
	b.limit.close()
	b.writers.Wait()
	b.cancel()
}

// Shed returns how many items Submit refused with ErrOverloaded so far.
func (b *Batcher[T, R]) Shed() uint64 { return b.shed.Load() }

// Writers is how many batches may flush at once now, a snapshot for metrics.
func (b *Batcher[T, R]) Writers() int { return b.limit.writers() }

func (b *Batcher[T, R]) release(r *request[T, R]) {
	var zero T
	r.item, r.span = zero, nil
	b.pool.Put(r)
}

// write is one writer goroutine: it takes a batch, flushes it, answers it,
// and repeats until the queue is closed and drained.
func (b *Batcher[T, R]) write() {
	defer b.writers.Done()
	w := writer[T, R]{
		b:     b,
		reqs:  make([]*request[T, R], 0, b.cfg.MaxBatch),
		items: make([]T, 0, b.cfg.MaxBatch),
	}
	for {
		// The permit is held while waiting for work: a writer that may
		// flush takes the next item at once.
		b.limit.acquire()
		r, ok := <-b.queue
		if !ok {
			b.limit.release(0, false)
			return
		}
		w.take(r)
		open := w.gather()
		size := w.flush()
		b.limit.release(size, len(b.queue) > 0)
		if !open {
			return
		}
	}
}
