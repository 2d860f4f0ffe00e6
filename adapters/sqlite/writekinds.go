package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// writeKind applies one kind of write inside a batch's transaction. The
// batch applies its writes one after the other, so a write sees every
// earlier write of the batch: adding a kind of write is adding one
// writeKind (and the statements it names), and nothing of the batching.
type writeKind func(tx *batchTx, w write) (writeOutcome, error)

// insertOne inserts w's record unless its id exists, and otherwise reads the
// row that is stored.
func insertOne(tx *batchTx, w write) (writeOutcome, error) {
	p := w.rec.Plant
	var tag *string
	if p.Tag().IsSet() {
		t := p.Tag().String()
		tag = &t
	}
	res, err := tx.stmt(insert).ExecContext(tx.ctx, int64(p.ID()), p.Name().String(), tag,
		w.rec.CreatedBy, w.rec.CreatedAt.UTC().Format(createdAtLayout))
	if err != nil {
		return writeOutcome{}, edgeError(fmt.Sprintf("insert plant %d", p.ID()), err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return writeOutcome{}, edgeError("insert", err)
	} else if n == 1 {
		return writeOutcome{stored: p, inserted: true}, nil
	}

	var row struct {
		Name string         `db:"name"`
		Tag  sql.NullString `db:"tag"`
	}
	if err := tx.stmt(load).GetContext(tx.ctx, &row, int64(p.ID())); errors.Is(err, sql.ErrNoRows) {
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
	res, err := tx.stmt(remove).ExecContext(tx.ctx, int64(w.id))
	if err != nil {
		return writeOutcome{}, edgeError(fmt.Sprintf("delete plant %d", w.id), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return writeOutcome{}, edgeError("delete", err)
	}
	return writeOutcome{deleted: n == 1}, nil
}

// statement names one of the statements a batch runs.
type statement int

const (
	insert statement = iota
	load
	remove
	announce
	statementCount
)

// statementTexts holds the text of each statement.
var statementTexts = [statementCount]string{
	insert: `INSERT INTO plants (id, name, tag, created_by, created_at) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (id) DO NOTHING`,
	load:   `SELECT name, tag FROM plants WHERE id = ?`,
	remove: `DELETE FROM plants WHERE id = ?`,
	announce: `INSERT INTO webhook_events (id, url, plant_id, name, tag, created_at, retry_from, next_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
}

// statements are prepared once on the write connection; each transaction
// borrows them through tx.Stmtx without preparing again.
type statements [statementCount]*sqlx.Stmt

func prepare(ctx context.Context, db *sqlx.DB) (*statements, error) {
	var st statements
	for i, text := range statementTexts {
		stmt, err := db.PreparexContext(ctx, text)
		if err != nil {
			_ = st.close()
			return nil, edgeError(fmt.Sprintf("prepare statement %d", i), err)
		}
		st[i] = stmt
	}
	return &st, nil
}

func (st *statements) close() error {
	var errs []error
	for _, stmt := range st {
		if stmt != nil {
			errs = append(errs, stmt.Close())
		}
	}
	return errors.Join(errs...)
}

// batchTx is a batch's transaction, with the statements its writes borrowed.
type batchTx struct {
	ctx      context.Context
	tx       *sqlx.Tx
	prepared *statements
	borrowed statements
}

// stmt returns the statement named st, bound to the transaction on first use.
func (b *batchTx) stmt(st statement) *sqlx.Stmt {
	if b.borrowed[st] == nil {
		b.borrowed[st] = b.tx.StmtxContext(b.ctx, b.prepared[st])
	}
	return b.borrowed[st]
}
