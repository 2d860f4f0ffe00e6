package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/plantstore/plantstore/domain"
)

// DeletePlantIf removes the plant stored under id when it is exactly
// expect; otherwise it answers the plant stored. It returns once the
// deletion is committed to disk, under the same rules as InsertIfAbsent.
func (s *Store) DeletePlantIf(ctx context.Context, id domain.ID, expect domain.Plant) (domain.Plant, bool, bool, error) {
	out, err := s.submit(ctx, write{kind: &deleteIfKind, id: id, arg: expect})
	return out.stored, !out.absent && err == nil, out.done, err
}

// deleteIfKind reads the stored plant, compares it with the expected one
// and deletes it, all in the batch's transaction, which no other writer
// shares: the check and the write are one step.
var deleteIfKind = writeKind{statements: []string{loadPlant, deletePlant}, apply: deleteIfOne}

func deleteIfOne(tx *batchTx, w write) (writeOutcome, error) {
	stored, found, err := loadStored(tx, w.id)
	if err != nil || !found {
		return writeOutcome{absent: !found}, err
	}
	if stored != w.arg.(domain.Plant) {
		return writeOutcome{stored: stored}, nil
	}
	return deleteOne(tx, w)
}

// loadStored reads the plant stored under id inside the batch's transaction,
// for the kinds whose write depends on what is stored.
func loadStored(tx *batchTx, id domain.ID) (stored domain.Plant, found bool, err error) {
	var row struct {
		Name string         `db:"name"`
		Tag  sql.NullString `db:"tag"`
	}
	if err := tx.stmt(loadPlant).GetContext(tx.ctx, &row, int64(id)); errors.Is(err, sql.ErrNoRows) {
		return domain.Plant{}, false, nil
	} else if err != nil {
		return domain.Plant{}, false, edgeError(fmt.Sprintf("load plant %d", id), err)
	}
	stored, err = restore(int64(id), row.Name, row.Tag)
	return stored, true, err
}
