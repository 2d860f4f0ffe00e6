package groupcommit

import (
	"context"
	"fmt"
	"time"
)

// writer gathers one batch from the queue and flushes it.
type writer[T, R any] struct {
	b     *Batcher[T, R]
	reqs  []*request[T, R]
	items []T
	timer *time.Timer
}

// take adds r to the batch unless its submitter has already given up.
func (w *writer[T, R]) take(r *request[T, R]) {
	if r.state.CompareAndSwap(stateQueued, stateTaken) {
		w.reqs = append(w.reqs, r)
		return
	}
	w.b.release(r)
}

// gather fills the batch from the queue up to MaxBatch, waiting at most
// MaxWait for more. It reports false once the queue is closed and drained.
func (w *writer[T, R]) gather() bool {
	max, wait := w.b.cfg.MaxBatch, w.b.cfg.MaxWait
	var deadline <-chan time.Time
	for len(w.reqs) < max {
		select {
		case r, ok := <-w.b.queue:
			if !ok {
				return false
			}
			w.take(r)
			continue
		default:
		}
		if wait == 0 {
			return true
		}
		if deadline == nil {
			if w.timer == nil {
				w.timer = time.NewTimer(wait)
			} else {
				w.timer.Reset(wait)
			}
			deadline = w.timer.C
		}
		select {
		case r, ok := <-w.b.queue:
			if !ok {
				return false
			}
			w.take(r)
		case <-deadline:
			return true
		}
	}
	return true
}

// flush runs the flush function over the batch and answers every submitter.
// It returns the batch's size.
func (w *writer[T, R]) flush() int {
	if len(w.reqs) == 0 {
		return 0
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	for _, r := range w.reqs {
		w.items = append(w.items, r.item)
	}
	ctx, cancel := w.b.ctx, context.CancelFunc(func() {})
	if w.b.cfg.FlushTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, w.b.cfg.FlushTimeout)
	}
	ctx, span := w.startBatch(ctx)
	results := w.b.flush(ctx, w.items)
	cancel()
	if span != nil {
		span.End()
	}
	if len(results) != len(w.items) {
		panic(fmt.Sprintf("groupcommit: flush returned %d results for a batch of %d", len(results), len(w.items)))
	}
	for i, r := range w.reqs {
		if r.state.CompareAndSwap(stateTaken, stateAnswered) {
			r.done <- results[i]
		} else {
			w.b.release(r) // its submitter left
		}
	}
	size := len(w.items)
	clear(w.items)
	clear(w.reqs)
	w.items, w.reqs = w.items[:0], w.reqs[:0]
	return size
}
