package application

import (
	"context"

	"github.com/plantstore/plantstore/domain"
)

// PlantFinder reads stored plants by id. Implementations are safe for
// concurrent use and see every plant whose create was acknowledged.
type PlantFinder interface {
	// FindPlant returns the plant stored under id and true, or false when
	// none is. Errors are ErrUnavailable when the store cannot be reached,
	// else faults.
	FindPlant(ctx context.Context, id domain.ID) (domain.Plant, bool, error)
}

// GetPlant is the use case that reads one stored plant.
type GetPlant struct {
	store PlantFinder
	scope string
}

// NewGetPlant returns the use case; it requires scopes.Read.
func NewGetPlant(store PlantFinder, scopes Scopes) *GetPlant {
	return &GetPlant{store: store, scope: scopes.Read}
}

// Authorize reports whether p may read plants: nil, or a *ScopeError.
func (uc *GetPlant) Authorize(p Principal) error { return requireScope(p, uc.scope) }

// Get returns the plant stored under id, or a *domain.NotFoundError when
// there is none.
func (uc *GetPlant) Get(ctx context.Context, p Principal, id domain.ID) (domain.Plant, error) {
	if err := uc.Authorize(p); err != nil {
		return domain.Plant{}, err
	}
	plant, found, err := uc.store.FindPlant(ctx, id)
	switch {
	case err != nil:
		return domain.Plant{}, err
	case !found:
		return domain.Plant{}, &domain.NotFoundError{ID: id}
	}
	return plant, nil
}
