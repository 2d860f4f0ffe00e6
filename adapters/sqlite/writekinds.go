package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// writeKind is one kind of write: how it is applied inside a batch's
// transaction. The batch applies its writes one after the other, so a write
// sees every earlier write of the batch: adding a kind of write is adding
// one writeKind, and nothing of the batching.
type writeKind struct {
	// statements are the statements apply runs, prepared before the batch's
	// transaction begins (the write connection is the transaction's then).
	statements []string
	// apply applies w in tx and answers it.
	apply func(tx *batchTx, w write) (writeOutcome, error)
}

// createKind inserts a plant unless its id exists, and announces what it
// inserts to every receiver in the same transaction.
var createKind = writeKind{statements: []string{insertPlant, loadPlant, announcePlant}, apply: insertOne}

// deleteKind removes a plant.
var deleteKind = writeKind{statements: []string{deletePlant}, apply: deleteOne}

const (
	insertPlant = `INSERT INTO plants (id, name, tag, created_by, created_at) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (id) DO NOTHING`
	loadPlant     = `SELECT name, tag FROM plants WHERE id = ?`
	deletePlant   = `DELETE FROM plants WHERE id = ?`
	announcePlant = `INSERT INTO webhook_events (id, url, plant_id, name, tag, created_at, retry_from, next_at, trace_parent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// insertOne inserts w's record unless its id exists, and otherwise reads the
// row that is stored.
func insertOne(tx *batchTx, w write) (writeOutcome, error) {
	p := w.rec.Plant
	var tag *string
	if p.Tag().IsSet() {
		t := p.Tag().String()
		tag = &t
	}
	res, err := tx.stmt(insertPlant).ExecContext(tx.ctx, int64(p.ID()), p.Name().String(), tag,
		w.rec.CreatedBy, w.rec.CreatedAt.UTC().Format(createdAtLayout))
	if err != nil {
		return writeOutcome{}, edgeError(fmt.Sprintf("insert plant %d", p.ID()), err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return writeOutcome{}, edgeError("insert", err)
	} else if n == 1 {
		if len(tx.store.receivers) > 0 {
			if err := tx.store.announceOne(tx.ctx, tx.stmt(announcePlant), w.rec); err != nil {
				return writeOutcome{}, err
			}
			tx.announced = true
		}
		return writeOutcome{stored: p, done: true}, nil
	}

	var row struct {
		Name string         `db:"name"`
		Tag  sql.NullString `db:"tag"`
	}
	if err := tx.stmt(loadPlant).GetContext(tx.ctx, &row, int64(p.ID())); errors.Is(err, sql.ErrNoRows) {
		// Only the id can conflict, so this cannot happen; if it does, it
		// concerns this create alone.
		return writeOutcome{}, &rowError{msg: fmt.Sprintf("sqlite: plant %d neither inserted nor found", p.ID())}
	} else if err != nil {
		return writeOutcome{}, edgeError(fmt.Sprintf("load plant %d", p.ID()), err)
	}
	stored, err := restore(int64(p.ID()), row.Name, row.Tag)
	if err != nil {
		return writeOutcome{}, err
	}
	return writeOutcome{stored: stored}, nil
}

// deleteOne removes the plant stored under w's id, if any.
func deleteOne(tx *batchTx, w write) (writeOutcome, error) {
	res, err := tx.stmt(deletePlant).ExecContext(tx.ctx, int64(w.id))
	if err != nil {
		return writeOutcome{}, edgeError(fmt.Sprintf("delete plant %d", w.id), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return writeOutcome{}, edgeError("delete", err)
	}
	return writeOutcome{done: n == 1}, nil
}

// statements are prepared on the write connection, by their text, the
// first time a batch needs them; each transaction borrows them through
// tx.Stmtx without preparing again. Only the single writer goroutine
// touches them until Close.
type statements map[string]*sqlx.Stmt

// prepare prepares the statements of kind that are not prepared yet.
func (st statements) prepare(ctx context.Context, db *sqlx.DB, kind *writeKind) error {
	for _, text := range kind.statements {
		if st[text] != nil {
			continue
		}
		stmt, err := db.PreparexContext(ctx, text)
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
	borrowed  map[string]*sqlx.Stmt
	announced bool // an event was stored
}

// stmt returns the statement of text, which the kind of the write that
// runs it lists, bound to the transaction on first use.
func (b *batchTx) stmt(text string) *sqlx.Stmt {
	stmt := b.borrowed[text]
	if stmt == nil {
		stmt = b.tx.StmtxContext(b.ctx, b.store.stmts[text])
		b.borrowed[text] = stmt
	}
	return stmt
}
