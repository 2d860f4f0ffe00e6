package application

import (
	"context"

	"github.com/plantstore/plantstore/domain"
)

// PlantDeleter removes stored plants. Implementations are safe for
// concurrent use and durable: a nil error from DeletePlant means the
// deletion is committed. Writes to one id take effect in the order they are
// submitted.
type PlantDeleter interface {
	// DeletePlant removes the plant stored under id and reports whether there
	// was one. Errors are ErrUnavailable when the store cannot be reached,
	// else faults.
	DeletePlant(ctx context.Context, id domain.ID) (deleted bool, err error)
}

// DeletePlant is the use case that removes a stored plant. Its id is free
// again afterwards: a later create with it stores a new plant.
type DeletePlant struct {
	store   PlantDeleter
	updater PlantUpdater
	scope   string
}

// NewDeletePlant returns the use case; it requires scopes.Write. A delete
// with a precondition goes through updater.
func NewDeletePlant(store PlantDeleter, updater PlantUpdater, scopes Scopes) *DeletePlant {
	return &DeletePlant{store: store, updater: updater, scope: scopes.Write}
}

// Authorize reports whether p may delete plants: nil, or a *ScopeError.
func (uc *DeletePlant) Authorize(p Principal) error { return requireScope(p, uc.scope) }

// Delete removes the plant stored under id, or returns a
// *domain.NotFoundError when there is none. With a precondition, it removes
// only a stored plant that meets it, checked atomically with the write as
// ChangePlant.Change does, else it returns the precondition's refusal
// (ErrPreconditionFailed).
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
	_, err := uc.updater.DeletePlantIf(ctx, id, pre.refusal)
	return err
}
