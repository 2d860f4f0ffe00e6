package application

import (
	"context"
	"errors"
	"time"

	"github.com/plantstore/plantstore/domain"
)

// Event is one delivery owed to one receiver, committed with the write it
// announces: with the plant payload (PlantPayload) a create that stores a
// plant yields one per configured receiver, whose body is the plant; with
// the event payload (EventPayload) every committed write does, whose body is
// its event in the Standard Webhooks envelope.
type Event struct {
	// ID is unique per event and receiver and the same on every attempt:
	// receivers use it to drop a repeated delivery (webhook-id).
	ID string
	// URL is the receiver.
	URL string
	// PlantID is the id of the plant the event is about.
	PlantID domain.ID
	// Item is the plant as the write left it (for a delete, the state it
	// had), rendered as the API renders a PlantItem when the event was
	// committed with it: the body a receiver gets with the plant payload,
	// the envelope's plant with the event payload. Deleting the plant later
	// does not withdraw the event.
	Item []byte
	// Type is the type of the event in the feed that this delivery
	// announces, whose envelope is the body; empty for the plant payload,
	// whose body is Item.
	Type EventType
	// Number is that event's number in the feed (Type set).
	Number int64
	// CreatedAt is when the event was committed, with its write.
	CreatedAt time.Time
	// RetryFrom starts the window in which attempts are retried: the
	// event's creation, or the operator's last redelivery of it.
	RetryFrom time.Time
	// Attempts is how many attempts were made before this one.
	Attempts int
	// TraceParent is the W3C traceparent of the create that committed the
	// event, empty when it was not traced: a delivery, however much later
	// and on whichever replica, links its trace to the create's.
	TraceParent string
	// Claim identifies the store's claim on the event for this attempt;
	// settling the attempt presents it again. Opaque to all but the store.
	Claim string
}

// EventSender delivers one event to its receiver, for the delivery worker
// (adapters/dispatch); adapters/webhook implements it, and adapters do not
// import one another, so it is declared here. Implementations are safe for
// concurrent use.
type EventSender interface {
	// Send posts e to e.URL and returns nil when the receiver answered 2xx
	// in time, else a *DeliveryError saying why not. It never follows a
	// redirect. ctx bounds the attempt.
	Send(ctx context.Context, e Event) error
}

// ErrDelivery is the root of every failed attempt; test with errors.Is.
var ErrDelivery = errors.New("delivery failed")

// DeliveryError says why an attempt failed. It matches ErrDelivery.
type DeliveryError struct {
	// Outcome is a short stable word for metrics: "status" (an answer other
	// than 2xx), "redirect" (a 3xx, not followed), "timeout", "refused"
	// (no connection), or "error".
	Outcome string
	// Status is the receiver's HTTP status, when it answered.
	Status int
	// Detail is for the logs and the operator's view of failed events.
	Detail string
}

func (e *DeliveryError) Error() string { return "delivery failed: " + e.Detail }

// Unwrap makes every DeliveryError match ErrDelivery.
func (e *DeliveryError) Unwrap() error { return ErrDelivery }
