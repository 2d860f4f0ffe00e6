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

// insertOutcome is what the batch answers one create.
type insertOutcome struct {
	stored   domain.Plant
	inserted bool
}

// InsertIfAbsent stores rec unless a plant with its id exists, and returns
// the plant stored under that id and whether this call stored it. It returns
// only after the transaction holding rec has been committed to disk. A
// context that ends before the create joined a batch returns its error and
// writes nothing; once in a batch, the create is waited for.
func (s *Store) InsertIfAbsent(ctx context.Context, rec application.Record) (domain.Plant, bool, error) {
	if s.closing.Load() {
		return domain.Plant{}, false, errClosed
	}
	out, err := s.batcher.Submit(ctx, rec)
	switch {
	case err == nil:
		return out.stored, out.inserted, nil
	case errors.Is(err, groupcommit.ErrClosed):
		return domain.Plant{}, false, errClosed
	default:
		return domain.Plant{}, false, err
	}
}

var errClosed = fmt.Errorf("sqlite: store closed: %w", application.ErrUnavailable)

// flush writes one batch in one transaction. Creates are applied in order,
// so a second create of an id in the same batch sees the first one's row.
// A constraint failure aborts only its own statement (SQLite's default ABORT
// resolution keeps the transaction and the earlier rows), so a bad row fails
// alone and needs no savepoint. Any other failure fails the whole batch.
func (s *Store) flush(ctx context.Context, batch []application.Record) []groupcommit.Result[insertOutcome] {
	if s.beforeFlush != nil {
		s.beforeFlush()
	}
	start := time.Now()
	results := make([]groupcommit.Result[insertOutcome], len(batch))
	if err := s.commit(ctx, batch, results); err != nil {
		if ctx.Err() != nil {
			// The batch's own deadline (groupcommit FlushTimeout) ran out:
			// for the clients, the store did not answer in time.
			err = fmt.Errorf("sqlite: batch timed out: %w", application.ErrUnavailable)
		}
		for i := range results {
			results[i] = groupcommit.Result[insertOutcome]{Err: err}
		}
	}
	s.metrics.observeBatch(len(batch), time.Since(start))
	return results
}

func (s *Store) commit(ctx context.Context, batch []application.Record, results []groupcommit.Result[insertOutcome]) error {
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

	for i, rec := range batch {
		out, err := insertOne(ctx, insert, load, rec)
		if err != nil {
			if rowFault(err) {
				results[i].Err = err
				continue
			}
			return err
		}
		results[i].Value = out
	}
	if err := tx.Commit(); err != nil {
		return edgeError("commit", err)
	}
	return nil
}

// insertOne inserts rec unless its id exists, and otherwise reads the row
// that is stored.
func insertOne(ctx context.Context, insert, load *sqlx.Stmt, rec application.Record) (insertOutcome, error) {
	p := rec.Plant
	var tag *string
	if p.Tag().IsSet() {
		t := p.Tag().String()
		tag = &t
	}
	res, err := insert.ExecContext(ctx, int64(p.ID()), p.Name().String(), tag,
		rec.CreatedBy, rec.CreatedAt.UTC().Format(createdAtLayout))
	if err != nil {
		return insertOutcome{}, edgeError(fmt.Sprintf("insert plant %d", p.ID()), err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return insertOutcome{}, edgeError("insert", err)
	} else if n == 1 {
		return insertOutcome{stored: p, inserted: true}, nil
	}

	var row struct {
		Name string         `db:"name"`
		Tag  sql.NullString `db:"tag"`
	}
	if err := load.GetContext(ctx, &row, int64(p.ID())); errors.Is(err, sql.ErrNoRows) {
		// Only the id can conflict, so this cannot happen; if it does, it
		// concerns this create alone.
		return insertOutcome{}, &rowError{msg: fmt.Sprintf("sqlite: plant %d neither inserted nor found", p.ID())}
	} else if err != nil {
		return insertOutcome{}, edgeError(fmt.Sprintf("load plant %d", p.ID()), err)
	}
	var storedTag *string
	if row.Tag.Valid {
		storedTag = &row.Tag.String
	}
	stored, err := domain.RestorePlant(int64(p.ID()), row.Name, storedTag)
	if err != nil {
		return insertOutcome{}, &rowError{msg: fmt.Sprintf("sqlite: stored plant %d breaks the plant rules: %v", p.ID(), err)}
	}
	return insertOutcome{stored: stored}, nil
}

// statements are prepared once on the write connection; each transaction
// borrows them through tx.Stmtx without preparing again.
type statements struct {
	insert *sqlx.Stmt
	load   *sqlx.Stmt
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
	return &statements{insert: insert, load: load}, nil
}

func (st *statements) close() error {
	return errors.Join(st.insert.Close(), st.load.Close())
}
