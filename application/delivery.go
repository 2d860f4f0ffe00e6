package application

import (
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy holds the delivery rules of webhook events: how long a
// receiver is waited for after each failed attempt, and when an event that
// was never delivered is given up. Zero fields take the defaults of
// WithDefaults.
type RetryPolicy struct {
	MaxAge   time.Duration // after this long without delivery an event fails (72h)
	RetryMin time.Duration // first back-off (1s), doubling per attempt
	RetryMax time.Duration // longest back-off (1h)
}

// WithDefaults returns p with its zero fields set to the defaults.
func (p RetryPolicy) WithDefaults() RetryPolicy {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&p.MaxAge, 72*time.Hour)
	def(&p.RetryMin, time.Second)
	def(&p.RetryMax, time.Hour)
	return p
}

// Wait is the full back-off after the nth failed attempt: RetryMin doubling
// per attempt up to RetryMax.
func (p RetryPolicy) Wait(n int) time.Duration {
	// Doubled step by step rather than shifted: a shift by n overflows
	// once n passes 34 with a one-second start, which a receiver down for
	// a day reaches.
	wait := p.RetryMin
	for i := 1; i < n && wait < p.RetryMax; i++ {
		wait *= 2
	}
	return min(wait, p.RetryMax)
}

// Backoff is the wait after the nth failed attempt: a random point in the
// upper half of Wait(n), so that the events of a receiver that was down do
// not all come back at the same instant.
func (p RetryPolicy) Backoff(n int) time.Duration {
	wait := p.Wait(n)
	return wait/2 + rand.N(wait/2+1)
}

// LastAttemptAt is when e reaches its maximum age: the last retry comes
// then, however the back-off falls, and an attempt that fails then fails
// the event.
func (p RetryPolicy) LastAttemptAt(e Event) time.Time { return e.RetryFrom.Add(p.MaxAge) }

// Attempt is how one attempt to send an event ended.
type Attempt struct {
	// Err is the sender's answer: nil when the receiver answered 2xx.
	Err error
	// At is when the attempt ended.
	At time.Time
	// CutShort is set when a stop cut the attempt short: the receiver was
	// never given its chance, so the attempt never fails its event.
	CutShort bool
}

// AttemptOutcome names an attempt's result for metrics: "delivered" when
// err is nil, a DeliveryError's Outcome, or "error" for any other error.
func AttemptOutcome(err error) string {
	if err == nil {
		return "delivered"
	}
	var de *DeliveryError
	if errors.As(err, &de) {
		return de.Outcome
	}
	return "error"
}

// Settle says what attempt a of e means for the event: delivered, failed
// past its maximum age, or due again after its back-off, and at the latest
// at its maximum age.
func (p RetryPolicy) Settle(e Event, a Attempt) Settlement {
	s := Settlement{ID: e.ID, Claim: e.Claim}
	if a.Err == nil {
		s.Delivered = true
		return s
	}
	s.Error = a.Err.Error()
	end := p.LastAttemptAt(e)
	s.RetryAt = a.At.Add(p.Backoff(e.Attempts + 1))
	if s.RetryAt.After(end) {
		s.RetryAt = end
	}
	s.Failed = !a.At.Before(end) && !a.CutShort
	return s
}
