package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The pages of many lists in one query, as point reads are gathered: each
// list is numbered n and gives its inclusive lower bound and page size (and
// its tag); the lateral subquery is the keyset query of one page and one
// plant more, a range scan of the primary key, or of plants_tag_id with a
// tag, aggregated into one row per list. A query costs the server far more
// than the rows of a page, so lists waiting at the same time share one.
//
// Each page is aggregated here, as application.Page says: the store passes
// one text per page through, where reading 100 rows into values and
// encoding them again cost the service as much CPU as the rest of the
// request (docs/performance.md, "List pages"). Every plant keeps its item,
// rendered by the service when it wrote the plant (plantRow.Item); the
// items reach string_agg in the order of the subquery, the index's,
// without a sort of their own (PostgreSQL's documented way of ordering an
// aggregate's input; pageOf checks that the last item is the greatest),
// and one plant more than the page tells whether more follow. A plant
// without an item (stored before items were, or written around the
// service) leaves its page to listOneByOne, which renders it in Go.
const renderedPage = `
SELECT q.n, p.*
FROM %s
CROSS JOIN LATERAL (
    SELECT string_agg(r.item, ',') AS items, count(*) AS count, max(r.id) AS greatest,
           count(*) - count(r.item) AS unrendered
    FROM (
        SELECT id, item FROM plants WHERE %s id >= q.from_id ORDER BY id LIMIT q.lim + 1
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
			return readPages(ctx, tx, unprepared{db: tx, text: query}, args, qs, group, out)
		})
	}
	stmt, err := s.stmts.get(ctx, s.db, query)
	if err != nil {
		return err
	}
	return readPages(ctx, s.db, stmt, args, qs, group, out)
}

// readPages runs a list query and sets the pages of the lists qs[group] in
// out; a page with a plant without an item is read again on db, one plant
// at a time.
func readPages(ctx context.Context, db sqlx.QueryerContext, stmt statement, args []any, qs []application.ListQuery, group []int, out []groupcommit.Result[application.Page]) error {
	rows, err := stmt.QueryxContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	answered := 0
	var unrendered []int // lists whose page has a plant without an item
	for ; rows.Next(); answered++ {
		var r struct {
			N          int64          `db:"n"`
			Items      sql.NullString `db:"items"` // lib/pq's copy, which pageOf copies once more with the brackets; NULL for no plant
			Count      int64          `db:"count"`
			Greatest   sql.NullInt64  `db:"greatest"`
			Unrendered int64          `db:"unrendered"`
		}
		if err := rows.StructScan(&r); err != nil {
			return err
		}
		if r.N < 1 || int(r.N) > len(group) {
			return fmt.Errorf("list answered for list %d of %d", r.N, len(group))
		}
		i := group[r.N-1]
		if r.Unrendered > 0 {
			unrendered = append(unrendered, i)
			continue
		}
		if out[i].Value, err = pageOf(r.Items.String, int(r.Count), qs[i].Limit, r.Greatest.Int64); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if answered != len(group) {
		return fmt.Errorf("list answered %d of %d lists", answered, len(group))
	}
	for _, i := range unrendered {
		if out[i].Value, err = listOneByOne(ctx, db, qs[i]); err != nil {
			return err
		}
	}
	return nil
}

// The page of one list as rows, for listOneByOne.
var (
	listRows       = `SELECT ` + columnList("") + ` FROM plants WHERE id >= $1 ORDER BY id LIMIT $2`
	listTaggedRows = `SELECT ` + columnList("") + ` FROM plants WHERE tag = $3 AND id >= $1 ORDER BY id LIMIT $2`
)

// listOneByOne reads the page of q as rows and renders in Go the items of
// the plants that have none: the way for pages of plants stored before
// items were, or written around the service.
func listOneByOne(ctx context.Context, db sqlx.QueryerContext, q application.ListQuery) (application.Page, error) {
	from, _ := q.From()
	query, args := listRows, []any{int64(from), q.Limit + 1}
	if q.Tag.IsSet() {
		query, args = listTaggedRows, append(args, q.Tag.String())
	}
	rows, err := db.QueryxContext(ctx, query, args...)
	if err != nil {
		return application.Page{}, err
	}
	defer rows.Close()
	page := application.Page{JSON: []byte{'['}}
	var r plantRow
	scan := rowScanner(rows, &r)
	for rows.Next() {
		if err := scan(); err != nil {
			return application.Page{}, err
		}
		if page.Count == q.Limit {
			page.More = true
			break
		}
		if page.Count > 0 {
			page.JSON = append(page.JSON, ',')
		}
		if r.Item.Valid {
			page.JSON = append(page.JSON, r.Item.String...)
		} else {
			p, err := r.plant()
			if err != nil {
				return application.Page{}, err
			}
			page.JSON = plantjson.AppendItem(page.JSON, p)
		}
		page.Count, page.Last = page.Count+1, domain.ID(r.ID)
	}
	if err := rows.Err(); err != nil {
		return application.Page{}, err
	}
	page.JSON = append(page.JSON, ']')
	return page, nil
}
