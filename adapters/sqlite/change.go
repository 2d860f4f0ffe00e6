package sqlite

import (
	"context"
	"fmt"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// change is what a change carries through the batch.
type change struct {
	set    application.PlantChange
	expect *domain.Plant
}

// ChangePlant applies c to the plant stored under id when expect is nil or
// is exactly the stored plant. It returns once the change is committed to
// disk, under the same rules as InsertIfAbsent.
func (s *Store) ChangePlant(ctx context.Context, id domain.ID, c application.PlantChange, expect *domain.Plant) (application.Changed, error) {
	out, err := s.submit(ctx, write{kind: &changeKind, id: id, arg: change{set: c, expect: expect}})
	return application.Changed{Plant: out.stored, Found: !out.absent, Applied: out.done}, err
}

// changeKind reads the stored plant, checks the expectation and writes the
// changed plant, all in the batch's transaction, which no other writer
// shares: the check and the write are one step.
var changeKind = writeKind{statements: []string{loadPlant, updatePlant}, apply: changeOne}

const updatePlant = `UPDATE plants SET name = ?, tag = ? WHERE id = ?`

func changeOne(tx *batchTx, w write) (writeOutcome, error) {
	c := w.arg.(change)
	stored, found, err := loadStored(tx, w.id)
	if err != nil || !found {
		return writeOutcome{absent: !found}, err
	}
	if c.expect != nil && stored != *c.expect {
		return writeOutcome{stored: stored}, nil
	}
	// The row is written even when the change leaves it as it was, as
	// PostgreSQL's UPDATE does: a change costs the same whatever it sets.
	next := c.set.Apply(stored)
	var tag *string
	if next.Tag().IsSet() {
		t := next.Tag().String()
		tag = &t
	}
	if _, err := tx.stmt(updatePlant).ExecContext(tx.ctx, next.Name().String(), tag, int64(w.id)); err != nil {
		return writeOutcome{}, edgeError(fmt.Sprintf("change plant %d", w.id), err)
	}
	return writeOutcome{stored: next, done: true}, nil
}
