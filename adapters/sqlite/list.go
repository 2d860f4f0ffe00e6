package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The keyset query of a page and one plant more, a range scan of the rowid,
// or of plants_tag_id with a tag, from an inclusive lower bound, in id
// order. It renders nothing: it joins the items the service stored for the
// page's plants with commas, in id order (the aggregate's own ORDER BY id,
// which guarantees it, over the page's few rows), and counts the page's
// plants stored without one, whose page pageOfRows then renders instead.
// The aggregate names the two columns it reads, id and item. ?1 is the
// limit, ?2 the lower bound, ?3 the tag.
const pageQuery = `
SELECT group_concat(item, ',' ORDER BY id) FILTER (WHERE rn <= ?1) AS items,
       count(*) FILTER (WHERE rn <= ?1) AS count,
       max(id) FILTER (WHERE rn <= ?1) AS last,
       count(*) > ?1 AS more,
       count(*) FILTER (WHERE rn <= ?1 AND item IS NULL) AS unrendered
FROM (
    SELECT id, item, row_number() OVER (ORDER BY id) AS rn
    FROM plants WHERE %s id >= ?2 ORDER BY id LIMIT ?1 + 1
)`

// The rows of a page and one more, for a page with plants stored without
// their item.
const pageRowsQuery = `SELECT %s FROM plants WHERE %s id >= ?2 ORDER BY id LIMIT ?1 + 1`

var (
	listPlants           = fmt.Sprintf(pageQuery, "")
	listTaggedPlants     = fmt.Sprintf(pageQuery, "tag = ?3 AND")
	listPlantRows        = fmt.Sprintf(pageRowsQuery, stateColumns.list(), "")
	listTaggedPlantsRows = fmt.Sprintf(pageRowsQuery, stateColumns.list(), "tag = ?3 AND")
)

// pageRow is what the page query answers, scanned by column name.
type pageRow struct {
	Items      sql.NullString `db:"items"` // the items joined by commas; NULL for none
	Count      int            `db:"count"`
	Last       sql.NullInt64  `db:"last"`
	More       bool           `db:"more"`
	Unrendered int            `db:"unrendered"`
}

// ListPlants returns the page of the first q.Limit plants that match q, in
// ascending id order. It reads through the read pool, beside the writer:
// WAL shows it every committed batch.
func (s *Store) ListPlants(ctx context.Context, q application.ListQuery) (application.Page, error) {
	from, ok := q.From()
	if !ok {
		return application.EmptyPage(), nil
	}
	query, rowsQuery, args := listPlants, listPlantRows, []any{q.Limit, int64(from)}
	if q.Tag.IsSet() {
		query, rowsQuery, args = listTaggedPlants, listTaggedPlantsRows, append(args, q.Tag.String())
	}
	var r pageRow
	if err := s.get(ctx, &r, query, args...); err != nil {
		return application.Page{}, edgeError("list", err)
	}
	if r.Unrendered > 0 {
		var rows []plantState
		if err := s.selectRows(ctx, &rows, rowsQuery, args...); err != nil {
			return application.Page{}, edgeError("list", err)
		}
		return pageOfRows(rows, q.Limit)
	}
	page := application.Page{Count: r.Count, Last: domain.ID(r.Last.Int64), More: r.More}
	page.JSON = make([]byte, 0, len(r.Items.String)+2)
	page.JSON = append(append(append(page.JSON, '['), r.Items.String...), ']')
	return page, nil
}

// pageOfRows is the page of the first limit of rows, in id order, their
// items as stored or, where a row has none, rendered now.
func pageOfRows(rows []plantState, limit int) (application.Page, error) {
	page := application.Page{More: len(rows) > limit}
	rows = rows[:min(len(rows), limit)]
	page.JSON = append(page.JSON, '[')
	for i, r := range rows {
		if i > 0 {
			page.JSON = append(page.JSON, ',')
		}
		var err error
		if page.JSON, err = r.appendItem(page.JSON); err != nil {
			return application.Page{}, err
		}
	}
	page.JSON = append(page.JSON, ']')
	if page.Count = len(rows); page.Count > 0 {
		page.Last = domain.ID(rows[page.Count-1].ID)
	}
	return page, nil
}
