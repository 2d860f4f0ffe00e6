package application

import (
	"context"
	"fmt"

	"github.com/plantstore/plantstore/domain"
)

// Update decides the next state of a stored plant from its stored state:
// the plant to store instead, or an error that writes nothing. It must be a
// pure function of its argument, since a store calls it again on the new
// state when another writer came first.
type Update func(stored domain.Plant) (domain.Plant, error)

// Check decides whether a stored plant may be deleted: nil, or an error
// that deletes nothing. Like an Update, it may be called more than once.
type Check func(stored domain.Plant) error

// PlantUpdater writes stored plants as functions of their stored state. It
// is the one port of every write of one plant besides a create and a plain
// delete: a change, a conditional change or delete, or any write a new use
// case needs (watering a plant, say), which then needs no store code of its
// own. Implementations are safe for concurrent use and durable: a nil error
// means the write is committed. Writes of one id (creates, updates,
// deletes) take effect in the order they are submitted.
type PlantUpdater interface {
	// UpdatePlant stores update's answer for the plant stored under id, in
	// one atomic step with reading what update saw: no write of the id
	// comes between. It returns the plant stored afterwards. An answer
	// equal to the stored plant writes nothing. An error from update is
	// returned as it is, and a plant whose id is not id is refused; neither
	// writes anything. Without a stored plant the error is a
	// *domain.NotFoundError. Other errors are ErrUnavailable when the store
	// cannot be reached, else faults.
	UpdatePlant(ctx context.Context, id domain.ID, update Update) (domain.Plant, error)
	// DeletePlantIf deletes the plant stored under id when check allows
	// it, in one atomic step with reading what check saw, and returns the
	// plant deleted. An error from check is returned as it is, and nothing
	// is deleted. Errors otherwise as UpdatePlant's.
	DeletePlantIf(ctx context.Context, id domain.ID, check Check) (domain.Plant, error)
}

// On runs u on the stored plant for a store: it returns what to store and
// whether that is a write at all (an answer equal to stored is not), or u's
// error, or an error when u answered a plant of another id.
func (u Update) On(stored domain.Plant) (next domain.Plant, changed bool, err error) {
	next, err = u(stored)
	switch {
	case err != nil:
		return stored, false, err
	case next.ID() != stored.ID():
		return stored, false, fmt.Errorf("update of plant %d answered plant %d", stored.ID(), next.ID())
	}
	return next, next != stored, nil
}
