package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/plantstore/plantstore/domain"
)

// PlantChange is what a change sets of a stored plant: a nil field keeps
// the stored value. Tag pointing to domain.NoTag removes the tag.
type PlantChange struct {
	Name *domain.Name
	Tag  *domain.Tag
}

// Apply returns p with the change applied.
func (c PlantChange) Apply(p domain.Plant) domain.Plant {
	if c.Name != nil {
		p = p.WithName(*c.Name)
	}
	if c.Tag != nil {
		p = p.WithTag(*c.Tag)
	}
	return p
}

// Precondition decides whether a write may go ahead on the plant as it is
// stored: nil, or the error that refuses it, saying which of the client's
// conditions failed; an inbound adapter's conditional request (HTTP's
// If-Match and If-None-Match) is one. Like an Update, a store may call it
// more than once, each time on the plant it holds then.
type Precondition func(stored domain.Plant) error

// ErrPreconditionFailed means the stored plant did not meet the write's
// precondition: it is not in the state the client expected. Nothing was
// written. Every refusal of a Precondition matches it.
var ErrPreconditionFailed = errors.New("the plant does not meet the precondition")

// refusal is pre's answer on stored as the use cases return it: nil, or an
// error that matches ErrPreconditionFailed whatever pre answered.
func (pre Precondition) refusal(stored domain.Plant) error {
	err := pre(stored)
	if err == nil || errors.Is(err, ErrPreconditionFailed) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrPreconditionFailed, err)
}

// ChangePlant is the use case that changes a stored plant's name or tag.
type ChangePlant struct {
	store PlantUpdater
	scope string
}

// NewChangePlant returns the use case; it requires scopes.Write.
func NewChangePlant(store PlantUpdater, scopes Scopes) *ChangePlant {
	return &ChangePlant{store: store, scope: scopes.Write}
}

// Authorize reports whether p may change plants: nil, or a *ScopeError.
func (uc *ChangePlant) Authorize(p Principal) error { return requireScope(p, uc.scope) }

// Change applies change to the plant stored under id and returns the plant
// as stored after it; an empty change writes nothing and returns the stored
// plant. With a precondition, the change applies only to a stored plant
// that meets it, checked atomically with the write: of two writers whose
// precondition one state meets, exactly one succeeds, and the other gets
// the precondition's refusal (ErrPreconditionFailed) unless the new state
// meets its precondition too. A *domain.NotFoundError when no plant is
// stored, whatever the precondition.
func (uc *ChangePlant) Change(ctx context.Context, p Principal, id domain.ID, change PlantChange, pre Precondition) (domain.Plant, error) {
	if err := uc.Authorize(p); err != nil {
		return domain.Plant{}, err
	}
	return uc.store.UpdatePlant(ctx, id, func(stored domain.Plant) (domain.Plant, error) {
		if pre != nil {
			if err := pre.refusal(stored); err != nil {
				return domain.Plant{}, err
			}
		}
		return change.Apply(stored), nil
	})
}
