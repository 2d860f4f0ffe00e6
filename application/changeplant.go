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

// Changed is what a store did with a change.
type Changed struct {
	// Plant is the plant stored once the change ran: the changed plant, or
	// the stored one when the expectation did not hold.
	Plant domain.Plant
	// Found says that a plant was stored under the id.
	Found bool
	// Applied says that the change was applied.
	Applied bool
}

// PlantChanger changes stored plants. Implementations are safe for
// concurrent use and durable: a nil error from ChangePlant means the change
// is committed. Writes to one id (creates, changes, deletes) take effect in
// the order they are submitted.
type PlantChanger interface {
	// ChangePlant applies change to the plant stored under id when expect
	// is nil or is exactly the stored plant, in one atomic step. Errors are
	// ErrUnavailable when the store cannot be reached, else faults.
	ChangePlant(ctx context.Context, id domain.ID, change PlantChange, expect *domain.Plant) (Changed, error)
}

// Precondition says whether a write may go ahead on the plant as it is
// stored; an inbound adapter's conditional request (HTTP's If-Match) is one.
type Precondition func(stored domain.Plant) bool

// ErrPreconditionFailed means the stored plant did not meet the write's
// precondition: it changed since the client read it. Nothing was written.
var ErrPreconditionFailed = errors.New("the plant does not meet the precondition")

// maxConditionalAttempts bounds how often a conditional write is tried
// again after another writer changed the plant between the check and the
// write; each retry means that some other write took effect.
const maxConditionalAttempts = 8

// ChangePlant is the use case that changes a stored plant's name or tag.
type ChangePlant struct {
	store  PlantChanger
	finder PlantFinder
	scope  string
}

// NewChangePlant returns the use case; it requires scopes.Write.
func NewChangePlant(store PlantChanger, finder PlantFinder, scopes Scopes) *ChangePlant {
	return &ChangePlant{store: store, finder: finder, scope: scopes.Write}
}

// Authorize reports whether p may change plants: nil, or a *ScopeError.
func (uc *ChangePlant) Authorize(p Principal) error { return requireScope(p, uc.scope) }

// Change applies change to the plant stored under id and returns the plant
// as stored after it; an empty change writes nothing new and returns the
// stored plant. With a precondition, the change applies only to a stored
// plant that meets it, checked atomically with the write: the store writes
// only over the very plant that was checked, so of two writers that checked
// one state exactly one succeeds, and the other gets ErrPreconditionFailed
// unless the new state meets its precondition too. A *domain.NotFoundError
// when no plant is stored.
func (uc *ChangePlant) Change(ctx context.Context, p Principal, id domain.ID, change PlantChange, pre Precondition) (domain.Plant, error) {
	if err := uc.Authorize(p); err != nil {
		return domain.Plant{}, err
	}
	var expect *domain.Plant
	if pre != nil {
		stored, found, err := uc.finder.FindPlant(ctx, id)
		switch {
		case err != nil:
			return domain.Plant{}, err
		case !found:
			return domain.Plant{}, &domain.NotFoundError{ID: id}
		}
		expect = &stored
	}
	for range maxConditionalAttempts {
		if expect != nil && !pre(*expect) {
			return domain.Plant{}, ErrPreconditionFailed
		}
		res, err := uc.store.ChangePlant(ctx, id, change, expect)
		switch {
		case err != nil:
			return domain.Plant{}, err
		case !res.Found:
			return domain.Plant{}, &domain.NotFoundError{ID: id}
		case res.Applied:
			return res.Plant, nil
		}
		// Another write came between the check and this one: check again
		// on the plant it left.
		if pre != nil {
			stored := res.Plant
			expect = &stored
		}
	}
	return domain.Plant{}, fmt.Errorf("change of plant %d: %w (contention)", id, ErrUnavailable)
}
