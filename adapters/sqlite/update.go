package sqlite

import (
	"context"
	"fmt"

	"github.com/plantstore/plantstore/adapters/internal/traceparent"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// UpdatePlant stores update's answer for the plant stored under id. The
// read, the update and the write happen in the batch's transaction, which
// no other writer shares, so nothing comes between them and update runs
// once. It returns once the write is committed to disk, under the same
// rules as InsertIfAbsent.
func (s *Store) UpdatePlant(ctx context.Context, id domain.ID, update application.Update) (domain.Plant, error) {
	out, err := s.submit(ctx, write{kind: &updateKind, id: id, arg: update, trace: traceparent.From(ctx)})
	switch {
	case err != nil:
		return domain.Plant{}, err
	case out.absent:
		return domain.Plant{}, &domain.NotFoundError{ID: id}
	}
	return out.stored, nil
}

// DeletePlantIf removes the plant stored under id when check allows it,
// read, checked and deleted in the batch's transaction as UpdatePlant is,
// and returns the plant deleted.
func (s *Store) DeletePlantIf(ctx context.Context, id domain.ID, check application.Check) (domain.Plant, error) {
	out, err := s.submit(ctx, write{kind: &deleteIfKind, id: id, arg: check, trace: traceparent.From(ctx)})
	switch {
	case err != nil:
		return domain.Plant{}, err
	case out.absent:
		return domain.Plant{}, &domain.NotFoundError{ID: id}
	}
	return out.stored, nil
}

// updateKind reads the stored plant, asks the update for the next one and
// writes it when it differs: the one kind behind every write of one plant
// but a create and a plain delete.
var updateKind = writeKind{statements: []string{loadPlant, updatePlant, recordEvent, announceEnvelope}, apply: updateOne}

// deleteIfKind reads the stored plant, asks the check and deletes it.
var deleteIfKind = writeKind{statements: []string{loadPlant, deletePlant, recordEvent, announceEnvelope}, apply: deleteIfOne}

func updateOne(tx *batchTx, w write) (writeOutcome, error) {
	stored, out, err := loadForDecision(tx, w.id)
	if err != nil || out.absent {
		return out, err
	}
	var (
		next    domain.Plant
		changed bool
	)
	if out.refused = decide(w.id, func() error {
		var err error
		next, changed, err = w.arg.(application.Update).On(stored)
		return err
	}); out.refused != nil || !changed {
		return out, nil
	}
	state := stateOf(next)
	if _, err := tx.stmt(updatePlant).ExecContext(tx.ctx, state); err != nil {
		return writeOutcome{}, edgeError(fmt.Sprintf("update plant %d", w.id), err)
	}
	if err := tx.record(application.PlantChanged, w, state.Item.String); err != nil {
		return writeOutcome{}, err
	}
	return writeOutcome{stored: next, done: true}, nil
}

func deleteIfOne(tx *batchTx, w write) (writeOutcome, error) {
	stored, out, err := loadForDecision(tx, w.id)
	if err != nil || out.absent {
		return out, err
	}
	if out.refused = decide(w.id, func() error { return w.arg.(application.Check)(stored) }); out.refused != nil {
		return out, nil
	}
	switch out, err := deleteOne(tx, w); {
	case err != nil:
		return writeOutcome{}, err
	case !out.done:
		// The row was read in this transaction a moment ago.
		return writeOutcome{}, &rowError{msg: fmt.Sprintf("sqlite: plant %d read but not deleted", w.id)}
	}
	return writeOutcome{stored: stored, done: true}, nil
}

// loadForDecision reads the plant stored under id, which the outcome
// carries: absent when there is none.
func loadForDecision(tx *batchTx, id domain.ID) (domain.Plant, writeOutcome, error) {
	state, found, err := loadState(tx, id)
	if err != nil || !found {
		return domain.Plant{}, writeOutcome{absent: !found}, err
	}
	stored, err := state.plant()
	return stored, writeOutcome{stored: stored}, err
}

// decide runs a use case's function inside the batch, where a panic would
// end the single writer and every batch after it: it becomes the write's
// own error instead, and the batch goes on.
func decide(id domain.ID, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sqlite: the write of plant %d panicked: %v", id, r)
		}
	}()
	return fn()
}
