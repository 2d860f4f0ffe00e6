package application

import (
	"context"
	"errors"
	"time"

	"github.com/plantstore/plantstore/domain"
)

// EventType says what a committed write did to a plant. Every write that
// stores, changes or removes a plant yields one event, committed with it;
// a create that met a stored plant (a replay, a conflict), a change that
// left the plant as it was (an empty patch, the same values), a delete or a
// change of an absent plant and a write whose precondition failed write
// nothing, and so yield none.
type EventType string

// The types of event.
const (
	PlantCreated EventType = "plant.created"
	PlantChanged EventType = "plant.changed"
	PlantDeleted EventType = "plant.deleted"
)

// Bounds of a page of events, as those of a page of plants.
const (
	DefaultEventLimit = 100
	MaxEventLimit     = 1000
)

// DefaultEventRetention is how long the feed keeps events when no
// retention is configured.
const DefaultEventRetention = EventRetention(168 * time.Hour)

// EventRetention is how long the feed keeps events: older ones are pruned,
// and a position handed out longer ago than that is expired.
type EventRetention time.Duration

// FeedPosition is a place in the event feed: a page holds the events that
// follow it. Events are in the order of (Tx, Number); clients hold a
// position only as the opaque cursor the inbound adapter makes of it.
type FeedPosition struct {
	// Tx is the writing transaction where the store orders events by it
	// (PostgreSQL's 64-bit transaction id), else 0.
	Tx uint64
	// Number is the last event's number, or 0 for a position before every
	// event of Tx.
	Number int64
	// At is when the store handed the position out, by the store's clock,
	// to the microsecond: a position older than the retention is expired.
	At time.Time
}

// FeedQuery selects one page of events.
type FeedQuery struct {
	// After, when HasAfter is set, is where the page starts: the Next of
	// an earlier page. Without it the page starts at the oldest event kept.
	After    FeedPosition
	HasAfter bool
	// Limit is the most events on the page, 1 to MaxEventLimit.
	Limit int
	// Retention is how long the feed keeps events: After is expired when it
	// was handed out longer ago, or when events that followed it have been
	// pruned since.
	Retention EventRetention
}

// EventPage is one page of the feed as clients read it, rendered by the
// store as a page of plants is (Page): the events keep their plants' items,
// which go from the store to the client as bytes.
type EventPage struct {
	// JSON is the page's events in feed order, as a JSON array of the
	// contract's Event, each rendered by adapters/internal/plantjson; []
	// when the page is empty.
	JSON []byte
	// Count is how many events the page holds.
	Count int
	// Next is where the next page starts: after the page's last event, or,
	// on a page that is not full, past every event that can still be
	// committed before it, so that reading from it again returns the events
	// committed since, and nothing committed later is ever placed behind it.
	Next FeedPosition
}

// EmptyEventPage is a page without events that goes on from next.
func EmptyEventPage(next FeedPosition) EventPage {
	return EventPage{JSON: []byte("[]"), Next: next}
}

// ErrFeedExpired means a page was asked for after a position older than the
// feed's retention: events that followed it may have been pruned. The
// client starts again from a fresh list of plants and the feed's start.
var ErrFeedExpired = errors.New("after: the cursor is older than the event feed's retention; list the plants again and read the feed from its start")

// EventFeed reads the events that every committed write stored with it.
// Implementations are safe for concurrent use. Walking the feed from a
// page's Next to the next, again and again, a reader sees every committed
// write exactly once, in the order of each plant's writes, whatever commits
// concurrently on any number of replicas.
type EventFeed interface {
	// ReadEvents returns the page of at most q.Limit events that follow
	// q.After. Errors are ErrFeedExpired for an expired q.After,
	// ErrUnavailable when the store cannot be reached, else faults.
	ReadEvents(ctx context.Context, q FeedQuery) (EventPage, error)
}

// EventPruner removes the events that the feed no longer keeps.
type EventPruner interface {
	// PruneEvents removes at most limit of the oldest events committed
	// longer than retention ago (a store that keeps the events of one
	// write statement together removes them together, and counts limit of
	// those), and returns how many events it removed: fewer than limit
	// only when no more are due. A position before the last event it
	// removed is expired from then on. Concurrent calls, from any number of
	// replicas, are harmless.
	PruneEvents(ctx context.Context, retention EventRetention, limit int) (int, error)
}

// ListEvents is the use case that reads the event feed a page at a time.
type ListEvents struct {
	store     EventFeed
	scope     string
	retention EventRetention
}

// NewListEvents returns the use case; it requires scopes.Read, as reads
// and lists do, and judges cursors by retention.
func NewListEvents(store EventFeed, scopes Scopes, retention EventRetention) *ListEvents {
	return &ListEvents{store: store, scope: scopes.Read, retention: retention}
}

// Authorize reports whether p may read the feed: nil, or a *ScopeError.
func (uc *ListEvents) Authorize(p Principal) error { return requireScope(p, uc.scope) }

// List returns the page q selects, judging q.After by the feed's retention.
// A limit out of bounds is a *domain.FieldError for "limit"; an expired
// position is ErrFeedExpired.
func (uc *ListEvents) List(ctx context.Context, p Principal, q FeedQuery) (EventPage, error) {
	if err := uc.Authorize(p); err != nil {
		return EventPage{}, err
	}
	if q.Limit < 1 || q.Limit > MaxEventLimit {
		return EventPage{}, &domain.FieldError{Field: "limit", Problem: limitProblem}
	}
	q.Retention = uc.retention
	return uc.store.ReadEvents(ctx, q)
}
