package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The keyset query of a page and one plant more, a range scan of the rowid,
// or of plants_tag_id with a tag, from an inclusive lower bound, in id
// order, rendered as application.Page says: json_object writes the members
// in the order given and no space, and escapes what JSON requires and
// nothing else, as the service's encoder does for the names and tags the
// schema's checks admit (no control characters).
const renderedPage = `
SELECT '[' || coalesce(group_concat(item, ',' ORDER BY id) FILTER (WHERE rn <= ?1), '') || ']',
       count(*) FILTER (WHERE rn <= ?1),
       max(id) FILTER (WHERE rn <= ?1),
       count(*) > ?1
FROM (
    SELECT id,
           CASE WHEN tag IS NULL THEN json_object('id', id, 'name', name)
                ELSE json_object('id', id, 'name', name, 'tag', tag) END AS item,
           row_number() OVER (ORDER BY id) AS rn
    FROM plants WHERE %s id >= ?2 ORDER BY id LIMIT ?1 + 1
)`

var (
	listPlants       = fmt.Sprintf(renderedPage, "")
	listTaggedPlants = fmt.Sprintf(renderedPage, "tag = ?3 AND")
)

// ListPlants returns the page of the first q.Limit plants that match q, in
// ascending id order. It reads through the read pool, beside the writer:
// WAL shows it every committed batch.
func (s *Store) ListPlants(ctx context.Context, q application.ListQuery) (application.Page, error) {
	from, ok := q.From()
	if !ok {
		return application.EmptyPage(), nil
	}
	query, args := listPlants, []any{q.Limit, int64(from)}
	if q.Tag.IsSet() {
		query, args = listTaggedPlants, append(args, q.Tag.String())
	}
	var (
		page  application.Page
		count int64
		last  sql.NullInt64
	)
	if err := s.read.QueryRowContext(ctx, query, args...).Scan(&page.JSON, &count, &last, &page.More); err != nil {
		return application.Page{}, edgeError("list", err)
	}
	page.Count, page.Last = int(count), domain.ID(last.Int64)
	return page, nil
}

// FindPlant returns the plant stored under id and true, or false when none
// is. It reads through the read pool, beside the writer.
func (s *Store) FindPlant(ctx context.Context, id domain.ID) (domain.Plant, bool, error) {
	var (
		name string
		tag  sql.NullString
	)
	err := s.read.QueryRowContext(ctx, `SELECT name, tag FROM plants WHERE id = ?`, int64(id)).Scan(&name, &tag)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return domain.Plant{}, false, nil
	case err != nil:
		return domain.Plant{}, false, edgeError("find", err)
	}
	p, err := restore(int64(id), name, tag)
	return p, err == nil, err
}

// restore rebuilds a stored plant, refusing a row that breaks the plant
// rules (one written around the service) instead of serving it.
func restore(id int64, name string, tag sql.NullString) (domain.Plant, error) {
	var tagp *string
	if tag.Valid {
		tagp = &tag.String
	}
	p, err := domain.RestorePlant(domain.PlantFields{ID: id, Name: name, Tag: tagp})
	if err != nil {
		return domain.Plant{}, &rowError{msg: fmt.Sprintf("sqlite: stored plant %d breaks the plant rules: %v", id, err)}
	}
	return p, nil
}
