package application

import (
	"context"

	"github.com/plantstore/plantstore/domain"
)

// PlantDeleter removes stored plants. Implementations are safe for
// concurrent use and durable: a nil error from DeletePlant means the deletion
// is committed. Writes to one id take effect in the order they are submitted.
type PlantDeleter interface {
	// DeletePlant removes the plant stored under id and reports whether there
	// was one. Errors are ErrUnavailable when the store cannot be reached,
	// else faults.
	DeletePlant(ctx context.Context, id domain.ID) (deleted bool, err error)
}

// DeletePlant is the use case that removes a stored plant. Its id is free
// again afterwards: a later create with it stores a new plant.
type DeletePlant struct {
	store PlantDeleter
	scope string
}

// NewDeletePlant returns the use case; it requires scopes.Write.
func NewDeletePlant(store PlantDeleter, scopes Scopes) *DeletePlant {
	return &DeletePlant{store: store, scope: scopes.Write}
}

// Authorize reports whether p may delete plants: nil, or a *ScopeError.
func (uc *DeletePlant) Authorize(p Principal) error { return requireScope(p, uc.scope) }

// Delete removes the plant stored under id, or returns a
// *domain.NotFoundError when there is none.
func (uc *DeletePlant) Delete(ctx context.Context, p Principal, id domain.ID) error {
	if err := uc.Authorize(p); err != nil {
		return err
	}
	deleted, err := uc.store.DeletePlant(ctx, id)
	switch {
	case err != nil:
		return err
	case !deleted:
		return &domain.NotFoundError{ID: id}
	}
	return nil
}
