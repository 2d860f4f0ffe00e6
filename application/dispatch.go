package application

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"sync"
	"time"
)

// DispatchConfig tunes the dispatcher. Zero fields take the defaults below.
type DispatchConfig struct {
	Concurrency int           // attempts in flight at most, per receiver (16)
	Timeout     time.Duration // bound of one attempt (10s)
	Lease       time.Duration // claim of one attempt, at least twice Timeout (twice Timeout)
	MaxAge      time.Duration // after this long without delivery an event fails (72h)
	RetryMin    time.Duration // first back-off (1s), doubling per attempt
	RetryMax    time.Duration // longest back-off (1h)
	Poll        time.Duration // look for due events this often without a signal (1s)
	// Clients, when set, is the clients' demand. While at least YieldAt of
	// their requests are in flight, the dispatcher claims at most once per
	// YieldPause (100ms), for the slots free then, so that deliveries slow
	// to a trickle instead of taking the cores the clients wait for, and an
	// attempt that hangs holds only its own slot; events wait in the outbox
	// meanwhile and go at full speed once the clients' load drops. Zero
	// YieldAt never yields.
	Clients    Demand
	YieldAt    int
	YieldPause time.Duration
}

func (c DispatchConfig) withDefaults() DispatchConfig {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	def(&c.Timeout, 10*time.Second)
	def(&c.MaxAge, 72*time.Hour)
	def(&c.RetryMin, time.Second)
	def(&c.RetryMax, time.Hour)
	def(&c.Poll, time.Second)
	def(&c.YieldPause, 100*time.Millisecond)
	// An attempt ends, delivered or cut short, well before its claim does:
	// no other replica takes an event while it is being sent. A replica that
	// dies gives its claims back as quickly as that allows.
	c.Lease = max(c.Lease, 2*c.Timeout)
	return c
}

// Dispatcher is the use case that announces new plants: it claims due
// events from the outbox, sends each to its receiver, and settles the
// attempts. Delivery is at least once: an event leaves the outbox only after
// its receiver answered 2xx, so a crash between the answer and the
// settlement sends it again.
type Dispatcher struct {
	source   EventSource
	sender   EventSender
	clock    Clock
	observer DispatchObserver
	log      *slog.Logger
	cfg      DispatchConfig

	abortOnce sync.Once
	abort     chan struct{} // closed by Abort
}

// NewDispatcher returns the dispatcher; Run starts it.
func NewDispatcher(source EventSource, sender EventSender, clock Clock, observer DispatchObserver, log *slog.Logger, cfg DispatchConfig) *Dispatcher {
	return &Dispatcher{source: source, sender: sender, clock: clock, observer: observer, log: log,
		cfg: cfg.withDefaults(), abort: make(chan struct{})}
}

// Abort cuts the attempts in flight short, for a stop whose grace period
// is over: they are settled as failed attempts and retried later.
func (d *Dispatcher) Abort() { d.abortOnce.Do(func() { close(d.abort) }) }

// Run dispatches until ctx ends, then stops claiming, lets the attempts in
// flight finish within their timeout (or until Abort), settles them, and
// returns.
//
// Each receiver has its own claims and its own Concurrency slots, so that
// one that hangs until the timeout holds only its own events back.
func (d *Dispatcher) Run(ctx context.Context) {
	receivers := d.source.Receivers()
	if len(receivers) == 0 {
		return // the store keeps no events
	}
	settled := make(chan settling, d.cfg.Concurrency*len(receivers))
	settler := make(chan struct{})
	go func() { defer close(settler); d.settle(settled) }()

	// Attempts outlive ctx by their own timeout, so that a stop does not cut
	// a delivery that is about to succeed; Abort cuts them.
	attempts, cancelAttempts := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelAttempts()
	go func() {
		select {
		case <-d.abort:
			cancelAttempts()
		case <-attempts.Done():
		}
	}()

	// A commit stores events for every receiver: it wakes each one's loop.
	wake := make([]chan struct{}, len(receivers))
	var loops sync.WaitGroup
	for i, url := range receivers {
		wake[i] = make(chan struct{}, 1)
		loops.Go(func() { d.deliver(ctx, attempts, url, wake[i], settled) })
	}
	loops.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-d.source.Committed():
				for _, w := range wake {
					select {
					case w <- struct{}{}:
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

// deliver claims and attempts url's events until ctx ends, then waits for
// its attempts in flight. committed signals a commit of new events.
func (d *Dispatcher) deliver(ctx, attempts context.Context, url string, committed <-chan struct{}, settled chan<- settling) {
	slots := make(chan struct{}, d.cfg.Concurrency)
	freed := make(chan struct{}, 1)
	retry := newRetryAlarm()
	var inFlight sync.WaitGroup
	poll := time.NewTimer(0)
	defer poll.Stop()
	// A claim is a statement of its own, so while more events are due than
	// slots are free (the last claim filled every free slot), the dispatcher
	// waits until half the slots are free and claims for all of them, instead
	// of claiming one event each time one attempt ends. Once a claim found
	// fewer events than it asked for, any free slot takes the next ones.
	minClaim := max(1, d.cfg.Concurrency/2)
	backlog := false
	var claimed time.Time // when the last claim was made
	for {
		free := cap(slots) - len(slots)
		claimable := free > 0 && (!backlog || free >= minClaim || free == cap(slots))
		signal, polled, slotFreed := committed, poll.C, (<-chan struct{})(nil)
		wait := d.cfg.Poll
		if pause := d.cfg.YieldPause - time.Since(claimed); d.yielding() && pause > 0 {
			// The clients keep the service busy: wait for the pause to end
			// or for their load to drop.
			claimable, wait = false, pause
		} else if !claimable {
			signal, polled, slotFreed = nil, nil, freed
		}
		var claimedAt time.Time // on the dispatcher's clock, when it claimed now
		if claimable && ctx.Err() == nil {
			claimed, claimedAt = time.Now(), d.clock.Now()
			events, err := d.source.ClaimDue(ctx, url, claimedAt, d.cfg.Lease, free)
			if err != nil && ctx.Err() == nil {
				d.log.Warn("webhook events could not be claimed", "url", loggedURL(url), "error", err.Error())
			}
			for _, e := range events {
				slots <- struct{}{}
				inFlight.Go(func() {
					settled <- settling{Settlement: d.attempt(attempts, e), retry: retry}
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
			wait = retry.bound(claimedAt, d.clock.Now(), wait)
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

// yielding reports whether the clients' demand asks deliveries to give way.
func (d *Dispatcher) yielding() bool {
	return d.cfg.Clients != nil && d.cfg.YieldAt > 0 && d.cfg.Clients.InFlight() >= d.cfg.YieldAt
}

// attempt sends e once and says what to do with it.
func (d *Dispatcher) attempt(attempts context.Context, e Event) Settlement {
	ctx, cancel := context.WithTimeout(attempts, d.cfg.Timeout)
	defer cancel()
	err := d.sender.Send(ctx, e)
	now := d.clock.Now()
	s := Settlement{ID: e.ID, Claim: e.Claim}
	if err == nil {
		s.Delivered = true
		d.observer.Attempted("delivered", now.Sub(e.CreatedAt))
		return s
	}
	outcome := "error"
	var de *DeliveryError
	if errors.As(err, &de) {
		outcome = de.Outcome
	}
	d.observer.Attempted(outcome, 0)
	s.Error = err.Error()
	// The last retry comes when the event reaches its maximum age, however
	// the back-off falls; an attempt that fails then fails the event.
	end := e.RetryFrom.Add(d.cfg.MaxAge)
	s.RetryAt = now.Add(d.backoff(e.Attempts + 1))
	if s.RetryAt.After(end) {
		s.RetryAt = end
	}
	// An attempt that Abort cut short is retried, whatever the event's age:
	// the receiver was never given its chance.
	if !now.Before(end) && attempts.Err() == nil {
		s.Failed = true
		d.observer.GaveUp()
		d.log.Error("webhook event failed: no delivery within its maximum age", "event", e.ID, "url", loggedURL(e.URL),
			"plant", int64(e.Plant.ID()), "attempts", e.Attempts+1, "error", s.Error)
	}
	return s
}

// backoff is the wait after the nth failed attempt: RetryMin doubling per
// attempt up to RetryMax, of which a random half, so that the events of a
// receiver that was down do not all come back at the same instant.
func (d *Dispatcher) backoff(n int) time.Duration {
	// Doubled step by step rather than shifted: a shift by n overflows
	// once n passes 34 with a one-second start, which a receiver down for
	// a day reaches.
	wait := d.cfg.RetryMin
	for i := 1; i < n && wait < d.cfg.RetryMax; i++ {
		wait *= 2
	}
	wait = min(wait, d.cfg.RetryMax)
	return wait/2 + rand.N(wait/2+1)
}

// loggedURL is a receiver's URL as log lines show it: without its query or
// user information, where receivers often take their access token.
func loggedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery = nil, "", false
	return u.String()
}
