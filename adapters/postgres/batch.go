package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/lib/pq"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// maxAttempts bounds how often one batch is run again after a race it lost:
// a transient error, or a row that a concurrent transaction committed after
// this statement's snapshot and that must be read back.
const maxAttempts = 3

// result is the answer for one record of a batch.
type result = groupcommit.Result[outcome]

// flush stores one batch with one statement and one commit. It is the
// batcher's flush function: it answers every record, and a record whose row
// the database refuses fails alone.
func (s *Store) flush(ctx context.Context, batch []application.Record) []result {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()

	// One statement may not name an id twice, and every later create of an
	// id in the batch must see the first one's row as already stored.
	unique := make([]application.Record, 0, len(batch))
	slot := make([]int, len(batch))
	firstOf := make(map[domain.ID]int, len(batch))
	for i, rec := range batch {
		id := rec.Plant.ID()
		j, seen := firstOf[id]
		if !seen {
			j = len(unique)
			firstOf[id] = j
			unique = append(unique, rec)
		}
		slot[i] = j
	}

	stored := s.insertAll(ctx, unique)
	out := make([]result, len(batch))
	answered := make([]bool, len(unique))
	for i, j := range slot {
		out[i] = stored[j]
		if answered[j] {
			out[i].Value.inserted = false
		}
		answered[j] = true
	}
	s.metrics.observeBatch(len(batch), time.Since(start))
	return out
}

// insertAll stores recs, whose ids are distinct, and answers each of them.
func (s *Store) insertAll(ctx context.Context, recs []application.Record) []result {
	res := make([]result, len(recs))
	pending := make([]int, len(recs))
	for i := range pending {
		pending[i] = i
	}
	var lastErr error
	for attempt := 0; attempt < maxAttempts && len(pending) > 0; attempt++ {
		missing, err := s.insertOnce(ctx, recs, pending, res)
		if err == nil {
			pending, lastErr = missing, nil
			continue
		}
		switch classify(err) {
		case transient:
			lastErr = err
			continue
		case rowData:
			s.insertOneByOne(ctx, recs, pending, res, err)
		default:
			failed := s.fail("insert", err)
			for _, p := range pending {
				res[p].Err = failed
			}
		}
		return res
	}
	for _, p := range pending {
		if lastErr != nil {
			// Contention that outlasted every attempt: the client may retry.
			s.log.Warn("store contention", "op", "insert", "err", lastErr)
			res[p].Err = fmt.Errorf("store: %w (contention)", application.ErrUnavailable)
		} else {
			s.log.Error("store fault: plant neither inserted nor found", "id", int64(recs[p].Plant.ID()))
			res[p].Err = fmt.Errorf("store: plant %d could not be read back", recs[p].Plant.ID())
		}
	}
	return res
}

// insertOneByOne runs each pending record in its own statement after the
// batch statement was refused for the data of some row, so that only the
// offending rows fail.
func (s *Store) insertOneByOne(ctx context.Context, recs []application.Record, pending []int, res []result, batchErr error) {
	if len(pending) == 1 {
		p := pending[0]
		s.log.Error("store fault: row refused", "id", int64(recs[p].Plant.ID()), "err", batchErr)
		res[p].Err = fmt.Errorf("store: plant %d refused by the database%s", recs[p].Plant.ID(), sqlState(batchErr))
		return
	}
	for _, p := range pending {
		res[p] = s.insertAll(ctx, recs[p:p+1])[0]
	}
}

// insertOnce runs the batch statement for recs[pending] and records the
// answer of every record in res. It returns the records whose row was
// neither inserted nor visible and that the re-read did not find either.
// On error res is left untouched: nothing of the statement is known.
func (s *Store) insertOnce(ctx context.Context, recs []application.Record, pending []int, res []result) ([]int, error) {
	insert, _, err := s.stmts.get(ctx, s.db)
	if err != nil {
		return nil, err
	}
	n := len(pending)
	ids := make([]int64, n)
	names := make([]string, n)
	tags := make([]string, n)
	tagged := make([]bool, n)
	creators := make([]string, n)
	times := make([]string, n)
	for k, p := range pending {
		rec := recs[p]
		ids[k] = int64(rec.Plant.ID())
		names[k] = rec.Plant.Name().String()
		tags[k], tagged[k] = rec.Plant.Tag().String(), rec.Plant.Tag().IsSet()
		creators[k] = rec.CreatedBy
		times[k] = rec.CreatedAt.UTC().Format(time.RFC3339Nano)
	}

	rows, err := insert.QueryxContext(ctx, bigintArray(ids), textArray(names, nil), textArray(tags, tagged),
		textArray(creators, nil), textArray(times, nil))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// The statement answers only for the ids it did not insert; answers[k]
	// is the answer for recs[pending[k]].
	answers := make([]result, n)
	for k, p := range pending {
		answers[k] = result{Value: outcome{plant: recs[p].Plant, inserted: true}}
	}
	var (
		index   map[int64]int // id to k, built for the first row returned
		missing []int         // positions k of rows neither inserted nor seen
	)
	for rows.Next() {
		var (
			id        int64
			name, tag sql.NullString
		)
		if err := rows.Scan(&id, &name, &tag); err != nil {
			return nil, err
		}
		if index == nil {
			index = make(map[int64]int, n)
			for k, id := range ids {
				index[id] = k
			}
		}
		k, ok := index[id]
		if !ok {
			return nil, fmt.Errorf("batch answered for id %d, which it was not given", id)
		}
		if name.Valid {
			answers[k] = s.restore(id, name, tag)
		} else {
			answers[k] = result{}
			missing = append(missing, k)
		}
	}
	// Next returns false only after the server's ReadyForQuery, which
	// follows the commit: an error here means the commit is not known.
	if err := rows.Err(); err != nil {
		return nil, err
	}

	// A row committed by a concurrent transaction after this statement's
	// snapshot was taken stopped our insert but is not visible to it.
	if len(missing) > 0 {
		if missing, err = s.reread(ctx, ids, missing, answers); err != nil {
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

// reread reads back the rows of ids[missing] with a fresh snapshot, sets the
// answers of those it finds, and returns the positions still not found.
func (s *Store) reread(ctx context.Context, ids []int64, missing []int, answers []result) ([]int, error) {
	_, reread, err := s.stmts.get(ctx, s.db)
	if err != nil {
		return nil, err
	}
	want := make([]int64, len(missing))
	index := make(map[int64]int, len(missing))
	for i, k := range missing {
		want[i] = ids[k]
		index[ids[k]] = k
	}
	rows, err := reread.QueryxContext(ctx, pq.Array(want))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := make(map[int]bool, len(missing))
	for rows.Next() {
		var (
			id        int64
			name, tag sql.NullString
		)
		if err := rows.Scan(&id, &name, &tag); err != nil {
			return nil, err
		}
		if k, ok := index[id]; ok {
			answers[k] = s.restore(id, name, tag)
			found[k] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var still []int
	for _, k := range missing {
		if !found[k] {
			still = append(still, k)
		}
	}
	return still, nil
}

// restore rebuilds a stored plant, refusing a row that breaks the rules
// (one written around the service) instead of serving it.
func (s *Store) restore(id int64, name, tag sql.NullString) result {
	var tagp *string
	if tag.Valid {
		tagp = &tag.String
	}
	plant, err := domain.RestorePlant(id, name.String, tagp)
	if err != nil {
		s.log.Error("store fault: stored plant breaks the rules", "id", id, "err", err)
		return result{Err: fmt.Errorf("store: stored plant %d breaks the plant rules", id)}
	}
	return result{Value: outcome{plant: plant}}
}
