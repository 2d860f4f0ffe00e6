package dispatch

import (
	"context"
	"sync"
	"time"
)

// deliver claims and attempts url's events until ctx ends, then waits for
// its attempts in flight. committed signals a commit of new events.
func (w *Worker) deliver(ctx, attempts context.Context, url string, committed <-chan struct{}, settled chan<- settling) {
	slots := make(chan struct{}, w.cfg.Concurrency)
	freed := make(chan struct{}, 1)
	retry := newRetryAlarm()
	var inFlight sync.WaitGroup
	poll := time.NewTimer(0)
	defer poll.Stop()
	// A claim is a statement of its own, so while more events are due than
	// slots are free (the last claim filled every free slot), the worker
	// waits until half the slots are free and claims for all of them, instead
	// of claiming one event each time one attempt ends. Once a claim found
	// fewer events than it asked for, any free slot takes the next ones.
	minClaim := max(1, w.cfg.Concurrency/2)
	backlog := false
	var lastClaim time.Time
	for {
		free := cap(slots) - len(slots)
		claimable := free > 0 && (!backlog || free >= minClaim || free == cap(slots))
		signal, polled, slotFreed := committed, poll.C, (<-chan struct{})(nil)
		wait := w.cfg.Poll
		now := time.Now()
		if pause := w.cfg.YieldPause - now.Sub(lastClaim); w.yielding() && pause > 0 {
			// The clients keep the service busy: wait for the pause to end
			// or for their load to drop.
			claimable, wait = false, pause
		} else if !claimable {
			signal, polled, slotFreed = nil, nil, freed
		}
		var claimed time.Time // when this round claimed, if it did
		if claimable && ctx.Err() == nil {
			claimed, lastClaim = now, now
			events, err := w.deps.Source.ClaimDue(ctx, url, now, w.cfg.Lease, free)
			if err != nil && ctx.Err() == nil {
				w.deps.Log.Warn("webhook events could not be claimed", "url", loggedURL(url), "error", err.Error())
			}
			for _, e := range events {
				slots <- struct{}{}
				inFlight.Go(func() {
					settled <- settling{Settlement: w.attempt(attempts, e), retry: retry}
					<-slots
					select {
					case freed <- struct{}{}:
					default:
					}
				})
			}
			backlog = len(events) == free
			if backlog {
				continue // more may be due
			}
		}
		// A retry of this receiver falling due before the next poll wakes
		// the loop then, so that back-off and jitter keep their times.
		rescheduled := retry.set
		if polled == nil {
			rescheduled = nil
		} else {
			wait = retry.bound(claimed, time.Now(), wait)
		}
		poll.Reset(wait)
		select {
		case <-ctx.Done():
			inFlight.Wait()
			return
		case <-signal:
		case <-slotFreed:
		case <-polled:
		case <-rescheduled:
		}
	}
}
