package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/adapters/internal/traceparent"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// write is one operation of a batch: its kind says how the batch statement
// applies it and reads its answer (see kind).
type write struct {
	kind  *writeKind
	id    domain.ID          // the plant it writes
	rec   application.Record // a create's record
	arg   any                // what a write of another kind carries, read by its kind
	trace string             // the traceparent of a write other than a create (a create's is in rec)
}

// createWrite is the create of rec.
func createWrite(rec application.Record) write {
	return write{kind: &createKind, id: rec.Plant.ID(), rec: rec}
}

// deleteWrite is the delete of the plant stored under id.
func deleteWrite(id domain.ID) write { return write{kind: &deleteKind, id: id} }

func (w write) plantID() domain.ID { return w.id }

// traceParent is the traceparent of the request that made w, "" when it
// was not traced: its event's deliveries link to it.
func (w write) traceParent() string {
	if w.trace != "" {
		return w.trace
	}
	return w.rec.TraceParent
}

// outcome is what one write did, in terms every kind shares.
type outcome struct {
	// plant is the plant stored under the id once the write ran: what a
	// create stored or met, what an update stored, what a conditional
	// delete deleted.
	plant domain.Plant
	// done says that this write took effect: a create inserted, a delete
	// removed a plant, a replacement or removal wrote over the version it
	// was decided on. A later write of the same id that shared its row (see
	// writeKind.shares) answers with it clear.
	done bool
}

// result is the answer for one write of a batch.
type result = groupcommit.Result[outcome]

// InsertIfAbsent stores rec unless a plant with its id exists, and returns
// the plant stored under that id and whether this call stored it. It returns
// only after the batch holding rec has committed.
func (s *Store) InsertIfAbsent(ctx context.Context, rec application.Record) (domain.Plant, bool, error) {
	res, err := s.submit(ctx, createWrite(traceparent.Keep(ctx, rec)))
	return res.plant, res.done, err
}

// DeletePlant removes the plant stored under id and reports whether there was
// one. It returns only after the batch holding the delete has committed.
func (s *Store) DeletePlant(ctx context.Context, id domain.ID) (bool, error) {
	w := deleteWrite(id)
	w.trace = traceparent.From(ctx)
	res, err := s.submit(ctx, w)
	return res.done, err
}

// submit hands w to the batcher and waits for its batch to commit, until
// the caller's deadline or, for a caller without one, the query timeout: a
// batch's statements are never cut short, and a commit waiting for a
// synchronous standby that is gone would otherwise hold its caller too.
func (s *Store) submit(ctx context.Context, w write) (outcome, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.QueryTimeout)
		defer cancel()
	}
	res, err := s.batcher.Submit(ctx, w)
	return res, submitError(err)
}

// submitError maps what a batcher's Submit returns to the store's errors.
// A caller that gave up gets context.Canceled; one whose deadline passed,
// or that found the queue full, gets ErrUnavailable. Either may have been
// flushed, if its batch was in flight (groupcommit.ErrOutcomeUnknown). A
// flush's own errors are mapped already.
func submitError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, groupcommit.ErrClosed):
		return fmt.Errorf("store: %w (closed)", application.ErrUnavailable)
	case errors.Is(err, groupcommit.ErrOverloaded):
		return fmt.Errorf("store: %w (too many requests waiting)", application.ErrUnavailable)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("store: %w", context.Canceled)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("store: %w: %w", application.ErrUnavailable, context.DeadlineExceeded)
	}
	return err
}
