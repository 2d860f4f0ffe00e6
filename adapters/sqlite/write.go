package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/adapters/internal/traceparent"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// createdAtLayout stores times in UTC with a fixed width, so that text order
// is time order.
const createdAtLayout = "2006-01-02T15:04:05.000000000Z"

// write is one operation of a batch: its kind applies it inside the
// batch's transaction (see writeKind).
type write struct {
	kind *writeKind
	id   domain.ID          // the plant it writes
	rec  application.Record // a create's record
	row  plantRow           // a create's row, rendered before it joins the batch, off the single writer
	arg  any                // what a write of another kind carries, read by its kind: an update's function, a check
	// trace is the traceparent of a write other than a create (a create's
	// is in rec): its event's deliveries link to it.
	trace string
}

// traceParent is the traceparent of the request that made w, "" when it
// was not traced.
func (w write) traceParent() string {
	if w.trace != "" {
		return w.trace
	}
	return w.rec.TraceParent
}

// createWrite is the create of rec.
func createWrite(rec application.Record) write {
	return write{kind: &createKind, id: rec.Plant.ID(), rec: rec, row: rowOf(rec)}
}

// deleteWrite is the delete of the plant stored under id.
func deleteWrite(id domain.ID) write { return write{kind: &deleteKind, id: id} }

// writeOutcome is what the batch answers one write.
type writeOutcome struct {
	// stored is the plant stored under the id once the write ran: what a
	// create stored or met, what an update stored or met; the plant a
	// conditional delete removed.
	stored domain.Plant
	// done says that this write took effect: a create inserted, an update
	// wrote, a delete removed a plant.
	done bool
	// absent says that no plant was stored under the id for a write that
	// needs one.
	absent bool
	// refused is the write's own answer when it wrote nothing for it: the
	// error of an update or a check, handed back as it is. The rest of the
	// batch goes on.
	refused error
}

// InsertIfAbsent stores rec unless a plant with its id exists, and returns
// the plant stored under that id and whether this call stored it. It returns
// only after the transaction holding rec has been committed to disk. A
// context that ends before the create joined a batch returns its error and
// writes nothing; once in a batch, the create is waited for.
func (s *Store) InsertIfAbsent(ctx context.Context, rec application.Record) (domain.Plant, bool, error) {
	out, err := s.submit(ctx, createWrite(traceparent.Keep(ctx, rec)))
	return out.stored, out.done, err
}

// DeletePlant removes the plant stored under id and reports whether there
// was one. It returns once the deletion is committed to disk, under the same
// rules as InsertIfAbsent.
func (s *Store) DeletePlant(ctx context.Context, id domain.ID) (bool, error) {
	w := deleteWrite(id)
	w.trace = traceparent.From(ctx)
	out, err := s.submit(ctx, w)
	return out.done, err
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
	case errors.Is(err, groupcommit.ErrOverloaded):
		return writeOutcome{}, errOverloaded
	default:
		return writeOutcome{}, err
	}
}

var (
	errClosed     = fmt.Errorf("sqlite: store closed: %w", application.ErrUnavailable)
	errOverloaded = fmt.Errorf("sqlite: too many writes waiting: %w", application.ErrUnavailable)
)

// flush writes one batch in one transaction. Writes are applied in order,
// so a write to an id sees every earlier write to it in the same batch: a
// create after a delete stores anew, a second create meets the first one's
// row, an update reads what the update before it wrote, a second delete
// finds nothing.
// A constraint failure aborts only its own statement (SQLite's default ABORT
// resolution keeps the transaction and the earlier rows), so a bad row fails
// alone and needs no savepoint; so does an update or a check that refuses,
// having written nothing. Any other failure fails the whole batch.
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
		s.stmts = statements{}
	}
	var last *writeKind
	for _, w := range batch {
		if w.kind != last {
			if err := s.stmts.prepare(ctx, s.write, w.kind); err != nil {
				return err
			}
			last = w.kind
		}
	}
	tx, err := s.write.BeginTxx(ctx, nil) // BEGIN IMMEDIATE, from the DSN
	if err != nil {
		return edgeError("begin", err)
	}
	defer func() { _ = tx.Rollback() }() // after Commit it only reports ErrTxDone
	// The batch's time, to the microsecond as PostgreSQL keeps times, so
	// that an event's time reads the same on either store.
	at := stamp(time.Now().Truncate(time.Microsecond))
	btx := &batchTx{ctx: ctx, tx: tx, store: s, borrowed: make(map[string]*sqlx.NamedStmt, 4), at: at}

	for i, w := range batch {
		out, err := w.kind.apply(btx, w)
		switch {
		case err == nil:
			results[i] = groupcommit.Result[writeOutcome]{Value: out, Err: out.refused}
		case rowFault(err):
			results[i].Err = err
		default:
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return edgeError("commit", err)
	}
	if btx.announced {
		select {
		case s.committed <- struct{}{}:
		default:
		}
	}
	return nil
}
