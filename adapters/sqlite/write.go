package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// createdAtLayout stores times in UTC with a fixed width, so that text order
// is time order.
const createdAtLayout = "2006-01-02T15:04:05.000000000Z"

// write is one operation of a batch: the create of rec, or the delete of id.
type write struct {
	create bool
	rec    application.Record // a create's record
	id     domain.ID          // a delete's id
}

// writeOutcome is what the batch answers one write.
type writeOutcome struct {
	stored   domain.Plant // a create: the plant stored under its id
	inserted bool         // a create: this write stored it
	deleted  bool         // a delete: a plant was removed
}

// InsertIfAbsent stores rec unless a plant with its id exists, and returns
// the plant stored under that id and whether this call stored it. It returns
// only after the transaction holding rec has been committed to disk. A
// context that ends before the create joined a batch returns its error and
// writes nothing; once in a batch, the create is waited for.
func (s *Store) InsertIfAbsent(ctx context.Context, rec application.Record) (domain.Plant, bool, error) {
	out, err := s.submit(ctx, write{create: true, rec: rec})
	return out.stored, out.inserted, err
}

// DeletePlant removes the plant stored under id and reports whether there
// was one. It returns once the deletion is committed to disk, under the same
// rules as InsertIfAbsent.
func (s *Store) DeletePlant(ctx context.Context, id domain.ID) (bool, error) {
	out, err := s.submit(ctx, write{id: id})
	return out.deleted, err
}

// submit hands w to the single writer and waits for its transaction.
func (s *Store) submit(ctx context.Context, w write) (writeOutcome, error) {
	if s.closing.Load() {
		return writeOutcome{}, errClosed
	}
	out, err := s.batcher.Submit(ctx, w)
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, groupcommit.ErrClosed):
		return writeOutcome{}, errClosed
	default:
		return writeOutcome{}, err
	}
}

var errClosed = fmt.Errorf("sqlite: store closed: %w", application.ErrUnavailable)

// flush writes one batch in one transaction. Writes are applied in order,
// so a write to an id sees every earlier write to it in the same batch: a
// create after a delete stores anew, a second create meets the first one's
// row, a second delete finds nothing.
// A constraint failure aborts only its own statement (SQLite's default ABORT
// resolution keeps the transaction and the earlier rows), so a bad row fails
// alone and needs no savepoint. Any other failure fails the whole batch.
func (s *Store) flush(ctx context.Context, batch []write) []groupcommit.Result[writeOutcome] {
	if s.beforeFlush != nil {
		s.beforeFlush()
	}
	start := time.Now()
	results := make([]groupcommit.Result[writeOutcome], len(batch))
	if err := s.commit(ctx, batch, results); err != nil {
		if ctx.Err() != nil {
			// The batch's own deadline (groupcommit FlushTimeout) ran out:
			// for the clients, the store did not answer in time.
			err = fmt.Errorf("sqlite: batch timed out: %w", application.ErrUnavailable)
		}
		for i := range results {
			results[i] = groupcommit.Result[writeOutcome]{Err: err}
		}
	}
	s.metrics.observeBatch(len(batch), time.Since(start))
	return results
}

func (s *Store) commit(ctx context.Context, batch []write, results []groupcommit.Result[writeOutcome]) error {
	if s.stmts == nil {
		stmts, err := prepare(ctx, s.write)
		if err != nil {
			return err
		}
		s.stmts = stmts
	}
	tx, err := s.write.BeginTxx(ctx, nil) // BEGIN IMMEDIATE, from the DSN
	if err != nil {
		return edgeError("begin", err)
	}
	defer func() { _ = tx.Rollback() }() // after Commit it only reports ErrTxDone
	insert := tx.StmtxContext(ctx, s.stmts.insert)
	load := tx.StmtxContext(ctx, s.stmts.load)
	remove := tx.StmtxContext(ctx, s.stmts.remove)
	announce := tx.StmtxContext(ctx, s.stmts.announce)
	announced := false

	for i, w := range batch {
		var out writeOutcome
		var err error
		if w.create {
			out, err = insertOne(ctx, insert, load, w.rec)
		} else {
			out, err = deleteOne(ctx, remove, w.id)
		}
		if err != nil {
			if rowFault(err) {
				results[i].Err = err
				continue
			}
			return err
		}
		if out.inserted && len(s.receivers) > 0 {
			if err := s.announceOne(ctx, announce, w.rec); err != nil {
				return err
			}
			announced = true
		}
		results[i].Value = out
	}
	if err := tx.Commit(); err != nil {
		return edgeError("commit", err)
	}
	if announced {
		select {
		case s.committed <- struct{}{}:
		default:
		}
	}
	return nil
}

// insertOne inserts rec unless its id exists, and otherwise reads the row
// that is stored.
func insertOne(ctx context.Context, insert, load *sqlx.Stmt, rec application.Record) (writeOutcome, error) {
	p := rec.Plant
	var tag *string
	if p.Tag().IsSet() {
		t := p.Tag().String()
		tag = &t
	}
	res, err := insert.ExecContext(ctx, int64(p.ID()), p.Name().String(), tag,
		rec.CreatedBy, rec.CreatedAt.UTC().Format(createdAtLayout))
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
	if err := load.GetContext(ctx, &row, int64(p.ID())); errors.Is(err, sql.ErrNoRows) {
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

// deleteOne removes the plant stored under id, if any.
func deleteOne(ctx context.Context, remove *sqlx.Stmt, id domain.ID) (writeOutcome, error) {
	res, err := remove.ExecContext(ctx, int64(id))
	if err != nil {
		return writeOutcome{}, edgeError(fmt.Sprintf("delete plant %d", id), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return writeOutcome{}, edgeError("delete", err)
	}
	return writeOutcome{deleted: n == 1}, nil
}

// statements are prepared once on the write connection; each transaction
// borrows them through tx.Stmtx without preparing again.
type statements struct {
	insert   *sqlx.Stmt
	load     *sqlx.Stmt
	remove   *sqlx.Stmt
	announce *sqlx.Stmt
}

func prepare(ctx context.Context, db *sqlx.DB) (*statements, error) {
	insert, err := db.PreparexContext(ctx,
		`INSERT INTO plants (id, name, tag, created_by, created_at) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (id) DO NOTHING`)
	if err != nil {
		return nil, edgeError("prepare insert", err)
	}
	load, err := db.PreparexContext(ctx, `SELECT name, tag FROM plants WHERE id = ?`)
	if err != nil {
		_ = insert.Close()
		return nil, edgeError("prepare load", err)
	}
	remove, err := db.PreparexContext(ctx, `DELETE FROM plants WHERE id = ?`)
	if err != nil {
		_ = insert.Close()
		_ = load.Close()
		return nil, edgeError("prepare delete", err)
	}
	announce, err := db.PreparexContext(ctx, `INSERT INTO webhook_events (id, url, plant_id, name, tag, created_at, retry_from, next_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		_ = errors.Join(insert.Close(), load.Close(), remove.Close())
		return nil, edgeError("prepare announce", err)
	}
	return &statements{insert: insert, load: load, remove: remove, announce: announce}, nil
}

func (st *statements) close() error {
	return errors.Join(st.insert.Close(), st.load.Close(), st.remove.Close(), st.announce.Close())
}
