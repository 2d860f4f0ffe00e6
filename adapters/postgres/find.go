package postgres

import (
	"context"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/domain"
)

// maxListsPerQuery bounds the lists, or pages of the event feed, gathered
// into one query: a page may hold up to a thousand rows.
const maxListsPerQuery = 16

// findPlants reads many plants by id in one round trip. Point reads waiting
// at the same time are gathered into one such query, as writes are into one
// batch: a query costs the server far more than a row, so a gathered read
// costs it a fraction of a query of its own.
var findPlants = `SELECT ` + restoredColumns() + ` FROM plants WHERE id = ANY($1::bigint[])`

// found is the answer to one read: the plant, or ok false when none is stored.
type found struct {
	plant domain.Plant
	ok    bool
}

// FindPlant returns the plant stored under id and true, or false when none
// is. It reads committed rows only: every acknowledged create is there.
func (s *Store) FindPlant(ctx context.Context, id domain.ID) (domain.Plant, bool, error) {
	res, err := s.reads.Submit(ctx, id)
	return res.plant, res.ok, submitError(err)
}

// findBatch is the read batcher's flush function: one query for every id
// waiting, the same id asked twice answered twice.
func (s *Store) findBatch(ctx context.Context, ids []domain.ID) []groupcommit.Result[found] {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	out := make([]groupcommit.Result[found], len(ids))
	if err := s.findAll(ctx, ids, out); err != nil {
		failed := s.fail("find", err)
		for i := range out {
			out[i] = groupcommit.Result[found]{Err: failed}
		}
	}
	s.metrics.observeReads("find", len(ids), time.Since(start))
	return out
}

// findAll runs the query for ids and sets the answer of each in out.
func (s *Store) findAll(ctx context.Context, ids []domain.ID, out []groupcommit.Result[found]) error {
	stmt, err := s.stmts.get(ctx, s.db, findPlants)
	if err != nil {
		return err
	}
	want := make([]int64, len(ids))
	for i, id := range ids {
		want[i] = int64(id)
	}
	rows, err := stmt.QueryxContext(ctx, bigintArray(want))
	if err != nil {
		return err
	}
	defer rows.Close()
	var r plantRow
	scan := rowScanner(rows, &r)
	for rows.Next() {
		if err := scan(); err != nil {
			return err
		}
		p, err := r.plant()
		if err != nil {
			s.log.Error("store fault", "op", "find", "err", err)
		}
		for i, w := range want { // batches are small: a scan beats a map
			if w != r.ID {
				continue
			}
			if err != nil {
				out[i].Err = err
			} else {
				out[i].Value = found{plant: p, ok: true}
			}
		}
	}
	return rows.Err()
}
