package dispatch

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/plantstore/plantstore/application"
)

// settling is an attempt's outcome on its way to the store, with the retry
// alarm of its receiver's loop.
type settling struct {
	application.Settlement
	retry *retryAlarm
}

// retryAlarm holds the times at which events of one receiver, whose failed
// attempts have been settled, are due again, so that the receiver's loop
// claims each of them then instead of at its next poll, and back-off and
// jitter keep their times. It keeps the earliest maxRetryAlarms; the poll
// finds any other.
type retryAlarm struct {
	mu  sync.Mutex
	due []time.Time // ascending
	set chan struct{}
}

const maxRetryAlarms = 64

func newRetryAlarm() *retryAlarm { return &retryAlarm{set: make(chan struct{}, 1)} }

// schedule notes that an event is due again at t.
func (a *retryAlarm) schedule(t time.Time) {
	a.mu.Lock()
	i, _ := slices.BinarySearchFunc(a.due, t, time.Time.Compare)
	if i < maxRetryAlarms {
		a.due = slices.Insert(a.due, i, t)
		a.due = a.due[:min(len(a.due), maxRetryAlarms)]
	}
	a.mu.Unlock()
	if i == 0 {
		select {
		case a.set <- struct{}{}:
		default:
		}
	}
}

// bound returns wait, or less when the next alarm rings sooner. claimed is
// when the loop last claimed, zero when it did not this time: the alarms
// until then are done, that claim took their events. Without a claim, the
// alarms already due are dropped and wait is kept: the next claim, whenever
// the loop may make it, takes their events.
func (a *retryAlarm) bound(claimed, now time.Time, wait time.Duration) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	done := now
	if !claimed.IsZero() {
		done = claimed
	}
	i, _ := slices.BinarySearchFunc(a.due, done.Add(1), time.Time.Compare)
	a.due = a.due[i:]
	if len(a.due) == 0 || claimed.IsZero() {
		return wait
	}
	return min(wait, max(0, a.due[0].Sub(now)))
}

// settleEvery bounds how long an outcome waits to share a commit with
// others: settlements are written in batches, as creates are.
// settleAfterAbort bounds the writing of the outcomes settled after a stop's
// grace period ended, so that a stalled store holds the stop a second at
// most beyond it, rather than the attempts' timeout.
const (
	settleEvery      = 20 * time.Millisecond
	settleBatch      = 256
	settleAfterAbort = time.Second
)

// settle writes settlements in batches until in is closed and drained.
// Once an outcome to be retried is written, its receiver's alarm is set.
func (w *Worker) settle(in <-chan settling) {
	batch := make([]application.Settlement, 0, settleBatch)
	alarms := make([]*retryAlarm, 0, settleBatch)
	// The timer runs only while a batch waits: an idle worker sets none.
	timer := time.NewTimer(settleEvery)
	timer.Stop()
	var due <-chan time.Time
	flush := func() {
		timer.Stop()
		due = nil
		if len(batch) == 0 {
			return
		}
		timeout := w.cfg.Timeout
		select {
		case <-w.abort:
			// The grace period is over: what cannot be written now is
			// retried when its claim's lease ends, as below.
			timeout = min(timeout, settleAfterAbort)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		// An outcome that cannot be written leaves its event claimed: it is
		// attempted again when the lease ends.
		if err := w.deps.Source.Settle(ctx, batch); err != nil {
			w.deps.Log.Warn("webhook attempts could not be settled; they will be retried", "events", len(batch), "error", err.Error())
		} else {
			for i, s := range batch {
				if !s.Delivered && !s.Failed {
					alarms[i].schedule(s.RetryAt)
				}
			}
		}
		batch, alarms = batch[:0], alarms[:0]
	}
	for {
		select {
		case s, ok := <-in:
			if !ok {
				flush()
				return
			}
			batch, alarms = append(batch, s.Settlement), append(alarms, s.retry)
			if len(batch) == 1 {
				timer.Reset(settleEvery)
				due = timer.C
			}
			if len(batch) == settleBatch {
				flush()
			}
		case <-due:
			flush()
		}
	}
}
