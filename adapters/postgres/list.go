package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/application"
)

// The pages of many lists in one query, as point reads are gathered: each
// list is numbered n and gives its inclusive lower bound and page size (and
// its tag); the lateral subquery is the keyset query of one page and one
// plant more, a range scan of the primary key, or of plants_tag_id with a
// tag, aggregated into one row per list. A query costs the server far more
// than the rows of a page, so lists waiting at the same time share one.
//
// Each page is rendered here, as application.Page says: the store passes
// one text per page through, where reading 100 rows into values and
// encoding them again cost the service as much CPU as the rest of the
// request (docs/performance.md, "List pages"). Every plant keeps its item
// rendered when it was written (the migration keep_each_plants_item); one
// stored before has it rendered here by the same function. The items
// reach string_agg in the order of the subquery, the index's, without a
// sort of their own (PostgreSQL's documented way of ordering an
// aggregate's input; pageOf checks that the last item is the greatest),
// and one plant more than the page tells whether more follow.
const renderedPage = `
SELECT q.n, p.*
FROM %s
CROSS JOIN LATERAL (
    SELECT string_agg(r.item, ','), count(*), max(r.id)
    FROM (
        SELECT id, coalesce(item, plant_item(id, name, tag)) AS item
        FROM plants WHERE %s id >= q.from_id ORDER BY id LIMIT q.lim + 1
    ) AS r
) AS p`

var (
	listPages       = fmt.Sprintf(renderedPage, `unnest($1::bigint[], $2::int[]) WITH ORDINALITY AS q (from_id, lim, n)`, "")
	listTaggedPages = fmt.Sprintf(renderedPage, `unnest($1::bigint[], $2::int[], $3::text[]) WITH ORDINALITY AS q (from_id, lim, tag, n)`, "tag = q.tag AND")
)

// ListPlants returns the page of the first q.Limit plants that match q, in
// ascending id order. It reads committed rows only: every acknowledged
// create is there.
func (s *Store) ListPlants(ctx context.Context, q application.ListQuery) (application.Page, error) {
	if _, ok := q.From(); !ok {
		return application.EmptyPage(), nil
	}
	page, err := s.lists.Submit(ctx, q)
	return page, submitError(err)
}

// listBatch is the list batcher's flush function: one query for the lists
// without a tag, one for those with one.
func (s *Store) listBatch(ctx context.Context, qs []application.ListQuery) []groupcommit.Result[application.Page] {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	out := make([]groupcommit.Result[application.Page], len(qs))
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
				out[i] = groupcommit.Result[application.Page]{Err: failed}
			}
		}
	}
	s.metrics.observeReads("list", len(qs), time.Since(start))
	return out
}

// listGroup runs the query of the lists qs[group], all tagged or none, and
// sets their pages in out.
func (s *Store) listGroup(ctx context.Context, qs []application.ListQuery, group []int, out []groupcommit.Result[application.Page]) error {
	froms, limits := make([]int64, len(group)), make([]int64, len(group))
	tags := make([]string, len(group))
	for k, i := range group {
		from, _ := qs[i].From()
		froms[k], limits[k], tags[k] = int64(from), int64(qs[i].Limit), qs[i].Tag.String()
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
			return readPages(ctx, unprepared{db: tx, text: query}, args, qs, group, out)
		})
	}
	stmt, err := s.stmts.get(ctx, s.db, query)
	if err != nil {
		return err
	}
	return readPages(ctx, stmt, args, qs, group, out)
}

// readPages runs a list query and sets the pages of the lists qs[group] in
// out.
func readPages(ctx context.Context, stmt statement, args []any, qs []application.ListQuery, group []int, out []groupcommit.Result[application.Page]) error {
	rows, err := stmt.QueryxContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	answered := 0
	for ; rows.Next(); answered++ {
		var (
			n, count int64
			items    sql.NullString // lib/pq's copy, which pageOf copies once more with the brackets; NULL for no plant
			greatest sql.NullInt64
		)
		if err := rows.Scan(&n, &items, &count, &greatest); err != nil {
			return err
		}
		if n < 1 || int(n) > len(group) {
			return fmt.Errorf("list answered for list %d of %d", n, len(group))
		}
		i := group[n-1]
		if out[i].Value, err = pageOf(items.String, int(count), qs[i].Limit, greatest.Int64); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if answered != len(group) {
		return fmt.Errorf("list answered %d of %d lists", answered, len(group))
	}
	return nil
}
