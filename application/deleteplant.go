package application

import (
	"context"
	"fmt"

	"github.com/plantstore/plantstore/domain"
)

// PlantDeleter removes stored plants. Implementations are safe for
// concurrent use and durable: a nil error from DeletePlant or DeletePlantIf
// means the deletion is committed. Writes to one id take effect in the order
// they are submitted.
type PlantDeleter interface {
	// DeletePlant removes the plant stored under id and reports whether there
	// was one. Errors are ErrUnavailable when the store cannot be reached,
	// else faults.
	DeletePlant(ctx context.Context, id domain.ID) (deleted bool, err error)
	// DeletePlantIf removes the plant stored under id when it is exactly
	// expect, in one atomic step. Otherwise it removes nothing, and answers
	// the plant stored (found false when there is none).
	DeletePlantIf(ctx context.Context, id domain.ID, expect domain.Plant) (stored domain.Plant, found, deleted bool, err error)
}

// DeletePlant is the use case that removes a stored plant. Its id is free
// again afterwards: a later create with it stores a new plant.
type DeletePlant struct {
	store  PlantDeleter
	finder PlantFinder
	scope  string
}

// NewDeletePlant returns the use case; it requires scopes.Write.
func NewDeletePlant(store PlantDeleter, finder PlantFinder, scopes Scopes) *DeletePlant {
	return &DeletePlant{store: store, finder: finder, scope: scopes.Write}
}

// Authorize reports whether p may delete plants: nil, or a *ScopeError.
func (uc *DeletePlant) Authorize(p Principal) error { return requireScope(p, uc.scope) }

// Delete removes the plant stored under id, or returns a
// *domain.NotFoundError when there is none. With a precondition, it removes
// only a stored plant that meets it, checked atomically with the write as
// ChangePlant.Change does, else ErrPreconditionFailed.
func (uc *DeletePlant) Delete(ctx context.Context, p Principal, id domain.ID, pre Precondition) error {
	if err := uc.Authorize(p); err != nil {
		return err
	}
	if pre == nil {
		deleted, err := uc.store.DeletePlant(ctx, id)
		switch {
		case err != nil:
			return err
		case !deleted:
			return &domain.NotFoundError{ID: id}
		}
		return nil
	}
	stored, found, err := uc.finder.FindPlant(ctx, id)
	for range maxConditionalAttempts {
		switch {
		case err != nil:
			return err
		case !found:
			return &domain.NotFoundError{ID: id}
		case !pre(stored):
			return ErrPreconditionFailed
		}
		var deleted bool
		// Another write may come between the check and this one: the store
		// then answers the plant it left, which is checked again.
		if stored, found, deleted, err = uc.store.DeletePlantIf(ctx, id, stored); err == nil && deleted {
			return nil
		}
	}
	return fmt.Errorf("delete of plant %d: %w (contention)", id, ErrUnavailable)
}
