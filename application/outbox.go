package application

import (
	"context"
	"time"
)

// EventSource is the outbox of webhook deliveries as the delivery worker
// (adapters/dispatch) uses it. A store writes events in the same
// transaction as their plants; the worker claims the ones that are due,
// attempts them, and settles each attempt by RetryPolicy. It is declared
// here, beside Event and Settlement, because the stores implement it and
// adapters do not import one another. Implementations are safe for
// concurrent use, and claims are exclusive across every process sharing the
// store.
type EventSource interface {
	// Receivers are the URLs the store writes events for.
	Receivers() []string
	// ClaimDue claims at most limit of url's events that are due at now
	// and not failed, oldest first, until now+lease: no other claim takes
	// them before then. Each claim counts as an attempt. A process that dies
	// holding claims loses them when the lease ends.
	ClaimDue(ctx context.Context, url string, now time.Time, lease time.Duration, limit int) ([]Event, error)
	// Settle records the outcomes of attempts in one commit: a delivered
	// event is removed, another is due again at its RetryAt, or failed. An
	// outcome whose claim is no longer held changes nothing.
	Settle(ctx context.Context, outcomes []Settlement) error
	// Committed receives a signal after a write stored events, so that the
	// worker starts on them at once instead of at its next poll.
	Committed() <-chan struct{}
}

// Settlement is the outcome of one attempt.
type Settlement struct {
	ID, Claim string
	// Delivered removes the event.
	Delivered bool
	// Failed keeps the event, marked failed: past its maximum age.
	Failed bool
	// RetryAt is when an event neither delivered nor failed is due again.
	RetryAt time.Time
	// Error is why the attempt failed, for the operator.
	Error string
}

// EventLog is the outbox as an operator sees it: what is waiting, what
// failed, and a way to send failed events again.
type EventLog interface {
	// ListEvents returns at most limit events, oldest first: the failed
	// ones, or those still pending.
	ListEvents(ctx context.Context, failed bool, limit int) ([]EventStatus, error)
	// Redeliver makes failed events due at now again, with a new window of
	// retries from now: those listed, or every failed one when ids is empty.
	// It returns how many it made due.
	Redeliver(ctx context.Context, now time.Time, ids []string) (int, error)
}

// EventStatus is an event with where it stands.
type EventStatus struct {
	Event
	Failed    bool
	NextAt    time.Time // when it is due; while an attempt runs, when its claim ends
	LastError string    // why the last attempt failed
}
