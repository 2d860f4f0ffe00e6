package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// maxAttempts bounds how often one batch is run again after a race it lost:
// a transient error, or a row that a concurrent transaction committed after
// this statement's snapshot and that must be read back.
const maxAttempts = 3

// flush stores one batch of writes. It is the batcher's flush function: it
// answers every write, and a write whose row the database refuses fails
// alone. Writes to one id take effect in batch order: the batch runs as
// consecutive segments, each one statement and one commit, and two writes
// of one id share a segment only where their kind lets them share a row.
//
// Its statements are never cut short (writeCalls): one that outlives the
// query timeout, most often a commit waiting for the synchronous standby,
// holds its session and this batch until it ends, and the callers, each
// bounded by its own deadline, have gone with ErrUnavailable meanwhile.
// Write batches run on three quarters of the pool at most (Config.Batch's
// MaxWriters), so that reads keep sessions while writes are held.
func (s *Store) flush(ctx context.Context, batch []write) []result {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	return s.applyBatch(writing(ctx), batch, start)
}

// applyBatch runs the segments of batch and answers each write; it
// announces the writes that stored deliveries.
func (s *Store) applyBatch(ctx context.Context, batch []write, start time.Time) []result {
	out := make([]result, len(batch))
	for _, seg := range segments(batch) {
		s.applySegment(ctx, batch, seg, out)
	}
	announced := 0 // writes that stored deliveries: creates, or with the event payload any
	everyWrite := s.cfg.Payload == application.EventPayload
	for i, r := range out {
		if r.Err == nil && r.Value.done && (everyWrite || batch[i].kind == &createKind) {
			announced++
		}
	}
	s.announce(announced)
	s.metrics.observeBatch(len(batch), time.Since(start))
	return out
}

// segments splits a batch, in order, into runs that one statement can apply
// without reordering the writes of any id. A statement's parts all read one
// snapshot, so none sees another's effect on a row: within a run an id is
// written either once or only by writes of one kind that shares its row
// (kind.shares), which answer as if applied one after the other. A run is
// cut where an id comes again otherwise; order across runs is kept by
// committing one run before the next starts. A run is cut as well where a
// second kind that locks existing rows (kind.locks) would join it, so that
// every statement locks rows in id order and batches never deadlock each
// other. Under load cuts are rare: most batches are one segment.
func segments(batch []write) [][]int {
	var (
		segs    [][]int
		cur     = make([]int, 0, len(batch))
		kinds   = make(map[domain.ID]*writeKind, len(batch)) // id to the kind that wrote it
		locking *writeKind                                   // the kind of cur that locks rows
	)
	for i, w := range batch {
		id := w.plantID()
		k, seen := kinds[id]
		if seen && (k != w.kind || !k.shares) || w.kind.locks && locking != nil && locking != w.kind {
			segs = append(segs, cur)
			cur = make([]int, 0, len(batch)-i)
			clear(kinds)
			locking = nil
		}
		if w.kind.locks {
			locking = w.kind
		}
		kinds[id] = w.kind
		cur = append(cur, i)
	}
	return append(segs, cur)
}

// applySegment runs the writes batch[seg] and sets their answers in out.
// One statement may not name an id twice, so each id is written once; the
// later writes of the id (of a kind that shares rows) answer as if they ran
// right after the first: a create meets the plant the first one found or
// stored, a delete finds the plant already gone.
func (s *Store) applySegment(ctx context.Context, batch []write, seg []int, out []result) {
	// Updates by function decide their writes in Go first (applyUpdates);
	// the segment's other writes, of other ids, commit before them.
	if !slices.ContainsFunc(seg, func(i int) bool { return batch[i].kind == &updateKind }) {
		s.applyPlain(ctx, batch, seg, out)
		s.deleteUnrendered(ctx, batch, seg, out)
		return
	}
	var plain, updates []int
	for _, i := range seg {
		if batch[i].kind == &updateKind {
			updates = append(updates, i)
		} else {
			plain = append(plain, i)
		}
	}
	if len(plain) > 0 {
		s.applyPlain(ctx, batch, plain, out)
		s.deleteUnrendered(ctx, batch, plain, out)
	}
	if len(updates) > 0 {
		s.applyUpdates(ctx, batch, updates, out)
	}
}

// deleteUnrendered decides again, as conditional deletes that allow any
// plant, the plain deletes of batch[seg] that removed nothing: the plant
// was absent, or stored without its item (before items were kept, or
// written around the service), which its event must carry and which the
// service renders in Go (deleteKind). A later delete of the same id in seg
// shared the first one's answer and keeps it: the plant was already gone.
func (s *Store) deleteUnrendered(ctx context.Context, batch []write, seg []int, out []result) {
	var again []int
	seen := make(map[domain.ID]bool, len(seg))
	for _, i := range seg {
		w := batch[i]
		first := !seen[w.id]
		seen[w.id] = true
		if first && w.kind == &deleteKind && out[i].Err == nil && !out[i].Value.done {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return
	}
	conditional := make([]write, len(batch))
	for _, i := range again {
		conditional[i] = write{kind: &updateKind, id: batch[i].id, arg: updating{check: allowAny}}
	}
	s.applyUpdates(ctx, conditional, again, out)
	for _, i := range again {
		if nf := (*domain.NotFoundError)(nil); errors.As(out[i].Err, &nf) {
			out[i] = result{}
		}
	}
}

// applyPlain runs the writes batch[seg], none an update by function.
func (s *Store) applyPlain(ctx context.Context, batch []write, seg []int, out []result) {
	unique := make([]write, 0, len(seg))
	slot := make([]int, len(seg))
	firstOf := make(map[domain.ID]int, len(seg))
	for k, i := range seg {
		id := batch[i].plantID()
		j, seen := firstOf[id]
		if !seen {
			j = len(unique)
			firstOf[id] = j
			unique = append(unique, batch[i])
		}
		slot[k] = j
	}
	res := s.applyAll(ctx, unique)
	answered := make([]bool, len(unique))
	for k, i := range seg {
		j := slot[k]
		out[i] = res[j]
		if answered[j] {
			out[i].Value.done = false
		}
		answered[j] = true
	}
}

// applyAll runs ws, whose ids are distinct, and answers each of them.
func (s *Store) applyAll(ctx context.Context, ws []write) []result {
	res := make([]result, len(ws))
	pending := make([]int, len(ws))
	for i := range pending {
		pending[i] = i
	}
	var lastErr error
	for attempt := 0; attempt < maxAttempts && len(pending) > 0; attempt++ {
		missing, err := s.applyOnce(ctx, ws, pending, res)
		if err == nil {
			pending, lastErr = missing, nil
			continue
		}
		switch classify(err) {
		case transient:
			lastErr = err
			continue
		case rowData:
			s.applyOneByOne(ctx, ws, pending, res, err)
		default:
			failed := s.fail("write", err)
			for _, p := range pending {
				res[p].Err = failed
			}
		}
		return res
	}
	for _, p := range pending {
		if lastErr != nil {
			// Contention that outlasted every attempt: the client may retry.
			s.log.Warn("store contention", "op", "write", "err", lastErr)
			res[p].Err = fmt.Errorf("store: %w (contention)", application.ErrUnavailable)
		} else {
			s.log.Error("store fault: plant neither written nor found", "op", ws[p].kind.name, "id", int64(ws[p].plantID()))
			res[p].Err = fmt.Errorf("store: plant %d could not be read back", ws[p].plantID())
		}
	}
	return res
}

// applyOneByOne runs each pending write in a statement of its own after the
// batch statement was refused for the data of some row, so that only the
// offending rows fail.
func (s *Store) applyOneByOne(ctx context.Context, ws []write, pending []int, res []result, batchErr error) {
	if len(pending) == 1 {
		p := pending[0]
		s.log.Error("store fault: row refused", "id", int64(ws[p].plantID()), "err", batchErr)
		res[p].Err = fmt.Errorf("store: plant %d refused by the database%s", ws[p].plantID(), sqlState(batchErr))
		return
	}
	for _, p := range pending {
		res[p] = s.applyAll(ctx, ws[p:p+1])[0]
	}
}
