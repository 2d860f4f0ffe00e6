package application

import (
	"context"
	"time"

	"github.com/plantstore/plantstore/domain"
)

// Record is what a store keeps for one plant: the plant and who created it when.
type Record struct {
	Plant     domain.Plant
	CreatedBy string
	CreatedAt time.Time
	// TraceParent is the create's W3C traceparent, empty when it is not
	// traced. The store fills it from the context of the write, where
	// tracing puts it, and keeps it with the plant's events.
	TraceParent string
}

// PlantInserter stores new plants. Implementations are safe for concurrent
// use and durable: a nil error from InsertIfAbsent means the plant is
// committed.
type PlantInserter interface {
	// InsertIfAbsent stores rec unless a plant with its id exists. It returns
	// the plant stored under that id and whether this call stored it. Errors
	// are ErrUnavailable when the store cannot be reached, else faults.
	InsertIfAbsent(ctx context.Context, rec Record) (stored domain.Plant, inserted bool, err error)
}

// Outcome says what a create did.
type Outcome int

const (
	// Created means the plant was stored by this request.
	Created Outcome = iota + 1
	// Replayed means the same plant was already stored; nothing was written.
	Replayed
)

// CreatePlant is the use case that stores a new plant, idempotently by id.
type CreatePlant struct {
	store PlantInserter
	scope string
	now   func() time.Time
}

// NewCreatePlant returns the use case; it requires scopes.Write.
func NewCreatePlant(store PlantInserter, scopes Scopes) *CreatePlant {
	return &CreatePlant{store: store, scope: scopes.Write, now: time.Now}
}

// Authorize reports whether p may create plants: nil, or a *ScopeError. Inbound
// adapters call it before reading the request so that refusal costs nothing.
func (uc *CreatePlant) Authorize(p Principal) error { return requireScope(p, uc.scope) }

// Create stores np for p. The same id with the same content is a replay: the
// stored plant is returned and nothing is written. The same id with other
// content fails with domain.ErrConflict and leaves the stored plant as it was.
// A deleted id is free again: creating it stores the new plant.
func (uc *CreatePlant) Create(ctx context.Context, p Principal, np domain.NewPlant) (domain.Plant, Outcome, error) {
	if err := uc.Authorize(p); err != nil {
		return domain.Plant{}, 0, err
	}
	stored, inserted, err := uc.store.InsertIfAbsent(ctx, Record{
		Plant:     domain.PlantFrom(np),
		CreatedBy: p.Subject,
		CreatedAt: uc.now().UTC(),
	})
	switch {
	case err != nil:
		return domain.Plant{}, 0, err
	case inserted:
		return stored, Created, nil
	case stored.SameContent(np):
		return stored, Replayed, nil
	default:
		return domain.Plant{}, 0, domain.ErrConflict
	}
}
