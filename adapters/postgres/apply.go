package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// applyOnce runs the batch statement for ws[pending] and records the answer
// of every write in res. It returns the writes whose row was not visible to
// the statement and that the re-read did not find either. On error res is
// left untouched: the statement is atomic, and nothing of it is known.
func (s *Store) applyOnce(ctx context.Context, ws []write, pending []int, res []result) ([]int, error) {
	// answers[k] is the answer for ws[pending[k]]: until the statement says
	// otherwise, what its kind assumes of a write it returns no row for.
	answers := make([]result, len(pending))
	var (
		set    uint
		kinds  []*writeKind                      // the kinds present, in the order of their bits
		byKind = make(map[*writeKind][]write, 2) // each kind's writes, in id order
	)
	ids := make([]int64, 0, len(pending)) // every plant's, ascending: lockPlants
	announce := s.cfg.Payload == application.EventPayload && len(s.cfg.Receivers) > 0
	var traces traceList // with ids, for envelopes
	for _, k := range byID(ws, pending) {
		w := ws[pending[k]]
		ids = append(ids, int64(w.plantID()))
		if announce {
			traces.add(w.traceParent())
		}
		if set&w.kind.bit == 0 {
			set |= w.kind.bit
			kinds = append(kinds, w.kind)
			byKind[w.kind] = make([]write, 0, len(pending)-k) // most batches are of one kind
		}
		byKind[w.kind] = append(byKind[w.kind], w)
		answers[k] = w.kind.assumed(w)
	}
	slices.SortFunc(kinds, func(a, b *writeKind) int { return cmp.Compare(a.bit, b.bit) })
	args := []any{bigintArray(ids)}
	for _, kd := range kinds {
		args = append(args, kd.args(s, byKind[kd])...)
	}
	announcing := silent
	if announce {
		announcing = untraced
		args = append(args, s.receivers)
		if traces.any {
			announcing = traced
			args = append(args, traces.array())
		}
	}
	stmt, err := s.stmts.get(ctx, s.db, batchStatement(set, kinds, announcing))
	if err != nil {
		return nil, err
	}
	rows, err := stmt.QueryxContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		index   map[int64]int // id to k, built for the first row returned
		missing []int         // positions k of writes whose row was not visible
		row     answerRow
	)
	scan := rowScanner(rows, &row.plantRow, &row.Flag)
	for rows.Next() {
		if err := scan(); err != nil {
			return nil, err
		}
		if index == nil {
			index = make(map[int64]int, len(pending))
			for k, p := range pending {
				index[int64(ws[p].plantID())] = k
			}
		}
		k, ok := index[row.ID]
		if !ok {
			return nil, fmt.Errorf("batch answered for id %d, which it was not given", row.ID)
		}
		w := ws[pending[k]]
		var miss bool
		if answers[k], miss = w.kind.read(s, w, row); miss {
			missing = append(missing, k)
		}
	}
	// Next returns false only after the server's ReadyForQuery, which
	// follows the commit: an error here means the commit is not known.
	if err := rows.Err(); err != nil {
		return nil, err
	}

	// A row committed by a concurrent transaction after this statement's
	// snapshot was taken stopped our write but is not visible to it.
	if len(missing) > 0 {
		if missing, err = s.reread(ctx, ws, pending, missing, answers); err != nil {
			return nil, err
		}
	}
	var unanswered []int
	for _, k := range missing {
		unanswered = append(unanswered, pending[k])
	}
	for k, p := range pending {
		if !slices.Contains(missing, k) {
			res[p] = answers[k]
		}
	}
	return unanswered, nil
}

// byID returns the positions k of pending in the order of the ids of
// ws[pending[k]]. The statement writes its rows in the order of its arrays,
// so batches in flight at once (of one service or of several replicas) that
// share ids lock them in one order and wait for each other; in arrival order
// two of them could each hold an id the other needs, a deadlock that
// PostgreSQL breaks only after deadlock_timeout (a second by default).
func byID(ws []write, pending []int) []int {
	order := make([]int, len(pending))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Compare(ws[pending[a]].plantID(), ws[pending[b]].plantID())
	})
	return order
}

// reread reads back the rows of the writes ws[pending[missing]] with a
// fresh snapshot, sets the answers of those it finds (through their kind's
// read), and returns the positions still not found.
func (s *Store) reread(ctx context.Context, ws []write, pending, missing []int, answers []result) ([]int, error) {
	ids := make([]domain.ID, len(missing))
	for i, k := range missing {
		ids[i] = ws[pending[k]].plantID()
	}
	rows, err := s.readRows(ctx, ids)
	if err != nil {
		return nil, err
	}
	var still []int
	for _, k := range missing {
		w := ws[pending[k]]
		row, ok := rows[w.plantID()]
		if !ok {
			still = append(still, k)
			continue
		}
		var miss bool
		if answers[k], miss = w.kind.read(s, w, answerRow{plantRow: row}); miss {
			still = append(still, k)
		}
	}
	return still, nil
}

// restore answers with the plant of a stored row, or with a fault for a
// row that breaks the plant rules (one written around the service) instead
// of serving it.
func (s *Store) restore(row plantRow) result {
	plant, err := row.plant()
	if err != nil {
		s.log.Error("store fault", "op", "restore", "err", err)
		return result{Err: err}
	}
	return result{Value: outcome{plant: plant}}
}
