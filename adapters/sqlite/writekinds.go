package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// writeKind is one kind of write: how it is applied inside a batch's
// transaction. The batch applies its writes one after the other, so a write
// sees every earlier write of the batch: adding a kind of write is adding
// one writeKind, and nothing of the batching. A new write of one plant needs
// no kind at all: it is an update (UpdatePlant).
type writeKind struct {
	// statements are the statements apply runs, prepared before the batch's
	// transaction begins (the write connection is the transaction's then).
	statements []string
	// apply applies w in tx and answers it. An error fails the whole batch,
	// but a row fault (rowError), which fails w alone; an error that is w's
	// own answer and wrote nothing goes in the outcome's refused.
	apply func(tx *batchTx, w write) (writeOutcome, error)
}

// createKind inserts a plant unless its id exists, and announces what it
// inserts to every receiver in the same transaction: the plant with the
// plant payload, its event with the event payload (record).
var createKind = writeKind{statements: []string{insertPlant, loadPlant, announcePlant, recordEvent, announceEnvelope}, apply: insertOne}

// deleteKind removes a plant.
var deleteKind = writeKind{statements: []string{deletePlant, recordEvent, announceEnvelope}, apply: deleteOne}

// The statements on one plant, their column lists taken from plantRow and
// their arguments bound from one by name. A write of the plant after its
// create reads and sets its state alone.
var (
	insertPlant = `INSERT INTO plants (` + plantColumns.list() + `) VALUES (` + plantColumns.params() + `)
		ON CONFLICT (id) DO NOTHING`
	loadPlant   = `SELECT ` + stateColumns.list() + ` FROM plants WHERE id = :id`
	updatePlant = `UPDATE plants SET ` + stateColumns.assignments("id") + ` WHERE id = :id`
	// deletePlant answers the state it removed, which its event keeps.
	deletePlant = `DELETE FROM plants WHERE id = :id RETURNING ` + stateColumns.list()
)

// insertOne inserts w's record unless its id exists, and otherwise reads the
// row that is stored.
func insertOne(tx *batchTx, w write) (writeOutcome, error) {
	p := w.rec.Plant
	res, err := tx.stmt(insertPlant).ExecContext(tx.ctx, w.row)
	if err != nil {
		return writeOutcome{}, edgeError(fmt.Sprintf("insert plant %d", p.ID()), err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return writeOutcome{}, edgeError("insert", err)
	} else if n == 1 {
		if err := tx.record(application.PlantCreated, w, w.row.Item.String); err != nil {
			return writeOutcome{}, err
		}
		if len(tx.store.receivers) > 0 && !tx.store.envelopes {
			if err := tx.store.announceOne(tx.ctx, tx.stmt(announcePlant), w.rec, w.row.Item.String); err != nil {
				return writeOutcome{}, err
			}
			tx.announced = true
		}
		return writeOutcome{stored: p, done: true}, nil
	}
	state, found, err := loadState(tx, p.ID())
	switch {
	case err != nil:
		return writeOutcome{}, err
	case !found:
		// Only the id can conflict, so this cannot happen; if it does, it
		// concerns this create alone.
		return writeOutcome{}, &rowError{msg: fmt.Sprintf("sqlite: plant %d neither inserted nor found", p.ID())}
	}
	stored, err := state.plant()
	if err != nil {
		return writeOutcome{}, err
	}
	return writeOutcome{stored: stored}, nil
}

// deleteOne removes the plant stored under w's id, if any, and records
// the event of the state it had.
func deleteOne(tx *batchTx, w write) (writeOutcome, error) {
	var state plantState
	err := tx.stmt(deletePlant).QueryRowxContext(tx.ctx, plantState{ID: int64(w.id)}).StructScan(&state)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return writeOutcome{}, nil
	case err != nil:
		return writeOutcome{}, edgeError(fmt.Sprintf("delete plant %d", w.id), err)
	}
	item, err := state.appendItem(nil)
	if err != nil {
		return writeOutcome{}, err
	}
	if err := tx.record(application.PlantDeleted, w, string(item)); err != nil {
		return writeOutcome{}, err
	}
	return writeOutcome{done: true}, nil
}

// loadState reads the state of the plant stored under id inside the
// batch's transaction, for the kinds whose write depends on what is stored.
func loadState(tx *batchTx, id domain.ID) (state plantState, found bool, err error) {
	if err := tx.stmt(loadPlant).GetContext(tx.ctx, &state, plantState{ID: int64(id)}); errors.Is(err, sql.ErrNoRows) {
		return plantState{}, false, nil
	} else if err != nil {
		return plantState{}, false, edgeError(fmt.Sprintf("load plant %d", id), err)
	}
	return state, true, nil
}

// statements are prepared on the write connection, by their text, the
// first time a batch needs them; each transaction borrows them through
// tx.NamedStmtContext without preparing again. Only the single writer
// goroutine touches them until Close. Each is a named statement, whose
// arguments sqlx binds from a row shape by its db tags.
type statements map[string]*sqlx.NamedStmt

// prepare prepares the statements of kind that are not prepared yet.
func (st statements) prepare(ctx context.Context, db *sqlx.DB, kind *writeKind) error {
	for _, text := range kind.statements {
		if st[text] != nil {
			continue
		}
		stmt, err := db.PrepareNamedContext(ctx, text)
		if err != nil {
			return edgeError("prepare statement", err)
		}
		st[text] = stmt
	}
	return nil
}

func (st statements) close() error {
	var errs []error
	for _, stmt := range st {
		errs = append(errs, stmt.Close())
	}
	return errors.Join(errs...)
}

// batchTx is a batch's transaction, with the statements its writes borrowed.
type batchTx struct {
	ctx       context.Context
	tx        *sqlx.Tx
	store     *Store
	borrowed  map[string]*sqlx.NamedStmt
	announced bool   // an event was stored
	at        string // the time of the batch's events, stamped
}

// stmt returns the statement of text, which the kind of the write that
// runs it lists, bound to the transaction on first use.
func (b *batchTx) stmt(text string) *sqlx.NamedStmt {
	stmt := b.borrowed[text]
	if stmt == nil {
		stmt = b.tx.NamedStmtContext(b.ctx, b.store.stmts[text])
		b.borrowed[text] = stmt
	}
	return stmt
}
