package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The pages of many lists in one query, as point reads are gathered: each
// list is numbered n and gives its inclusive lower bound and limit (and its
// tag); the lateral subquery is the keyset query of one page, a range scan
// of the primary key, or of plants_tag_id with a tag. A query costs the
// server far more than the rows of a page, so lists waiting at the same time
// share one.
const (
	listPages = `
SELECT q.n, p.id, p.name, p.tag
FROM unnest($1::bigint[], $2::int[]) WITH ORDINALITY AS q (from_id, lim, n)
CROSS JOIN LATERAL (
    SELECT id, name, tag FROM plants WHERE id >= q.from_id ORDER BY id LIMIT q.lim
) AS p`
	listTaggedPages = `
SELECT q.n, p.id, p.name, p.tag
FROM unnest($1::bigint[], $2::int[], $3::text[]) WITH ORDINALITY AS q (from_id, lim, tag, n)
CROSS JOIN LATERAL (
    SELECT id, name, tag FROM plants WHERE tag = q.tag AND id >= q.from_id ORDER BY id LIMIT q.lim
) AS p`
)

// ListPlants returns at most q.Limit plants that match q, in ascending id
// order. It reads committed rows only: every acknowledged create is there.
func (s *Store) ListPlants(ctx context.Context, q application.ListQuery) ([]domain.Plant, error) {
	if _, ok := q.From(); !ok {
		return nil, nil
	}
	plants, err := s.lists.Submit(ctx, q)
	return plants, submitError(err)
}

// listBatch is the list batcher's flush function: one query for the lists
// without a tag, one for those with one.
func (s *Store) listBatch(ctx context.Context, qs []application.ListQuery) []groupcommit.Result[[]domain.Plant] {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	out := make([]groupcommit.Result[[]domain.Plant], len(qs))
	var plain, tagged []int
	for i, q := range qs {
		if q.Tag.IsSet() {
			tagged = append(tagged, i)
		} else {
			plain = append(plain, i)
		}
	}
	for _, group := range [][]int{plain, tagged} {
		if len(group) == 0 {
			continue
		}
		if err := s.listGroup(ctx, qs, group, out); err != nil {
			failed := s.fail("list", err)
			for _, i := range group {
				out[i] = groupcommit.Result[[]domain.Plant]{Err: failed}
			}
		}
	}
	s.metrics.observeReads("list", len(qs), time.Since(start))
	return out
}

// listGroup runs the query of the lists qs[group], all tagged or none, and
// sets their pages in out.
func (s *Store) listGroup(ctx context.Context, qs []application.ListQuery, group []int, out []groupcommit.Result[[]domain.Plant]) error {
	froms, limits := make([]int64, len(group)), make([]int64, len(group))
	tags := make([]string, len(group))
	for k, i := range group {
		from, _ := qs[i].From()
		froms[k], limits[k], tags[k] = int64(from), int64(qs[i].Limit), qs[i].Tag.String()
		out[i].Value = make([]domain.Plant, 0, qs[i].Limit)
	}
	query, args := listPages, []any{bigintArray(froms), bigintArray(limits)}
	if qs[group[0]].Tag.IsSet() {
		query, args = listTaggedPages, append(args, textArray(tags, nil))
	}
	if s.cfg.Pooler.shared() {
		// The planner takes each page's LIMIT, a column of the arguments,
		// for a tenth of the table, planned afresh or not: 32 pages on
		// three million plants were compiled (5.5 ms, against 0.2 ms
		// without JIT, measured), and a query's 16 pages reach that cost
		// at about six million. JIT is turned off in the query's
		// transaction, as sessionSettings does on sessions of the store's
		// own.
		return localTx(ctx, s.db, "jit = off", func(tx *sqlx.Tx) error {
			return s.readPages(ctx, unprepared{db: tx, text: query}, args, group, out)
		})
	}
	stmt, err := s.stmts.get(ctx, s.db, query)
	if err != nil {
		return err
	}
	return s.readPages(ctx, stmt, args, group, out)
}

// readPages runs a list query and sets the pages of the lists qs[group] in
// out.
func (s *Store) readPages(ctx context.Context, stmt statement, args []any, group []int, out []groupcommit.Result[[]domain.Plant]) error {
	rows, err := stmt.QueryxContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			n, id     int64
			name, tag sql.NullString
		)
		if err := rows.Scan(&n, &id, &name, &tag); err != nil {
			return err
		}
		if n < 1 || int(n) > len(group) {
			return fmt.Errorf("list answered for list %d of %d", n, len(group))
		}
		p, err := s.restorePlant(id, name, tag)
		if err != nil {
			return err
		}
		i := group[n-1]
		out[i].Value = append(out[i].Value, p)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// The rows come list by list in id order; SQL does not promise it.
	for _, i := range group {
		slices.SortFunc(out[i].Value, func(a, b domain.Plant) int { return cmp.Compare(a.ID(), b.ID()) })
	}
	return nil
}
