package postgres

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The keyset queries of a page: a range scan of the primary key, or of
// plants_tag_id with a tag, from an inclusive lower bound, in id order.
const (
	listPlants       = `SELECT id, name, tag FROM plants WHERE id >= $1 ORDER BY id LIMIT $2`
	listTaggedPlants = `SELECT id, name, tag FROM plants WHERE tag = $1 AND id >= $2 ORDER BY id LIMIT $3`
)

// ListPlants returns at most q.Limit plants that match q, in ascending id
// order. It reads committed rows only: every acknowledged create is there.
func (s *Store) ListPlants(ctx context.Context, q application.ListQuery) ([]domain.Plant, error) {
	from, ok := q.From()
	if !ok {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	query, args := listPlants, []any{int64(from), q.Limit}
	if q.Tag.IsSet() {
		query, args = listTaggedPlants, []any{q.Tag.String(), int64(from), q.Limit}
	}
	stmt, err := s.stmts.get(ctx, s.db, query)
	if err != nil {
		return nil, s.fail("list", err)
	}
	rows, err := stmt.QueryxContext(ctx, args...)
	if err != nil {
		return nil, s.fail("list", err)
	}
	plants, err := s.scanPlants(rows, q.Limit)
	if err != nil {
		return nil, s.fail("list", err)
	}
	return plants, nil
}

// scanPlants reads rows of (id, name, tag) into plants and closes rows. A
// row that breaks the plant rules fails the whole read.
func (s *Store) scanPlants(rows *sqlx.Rows, capacity int) ([]domain.Plant, error) {
	defer rows.Close()
	plants := make([]domain.Plant, 0, capacity)
	for rows.Next() {
		var (
			id        int64
			name, tag sql.NullString
		)
		if err := rows.Scan(&id, &name, &tag); err != nil {
			return nil, err
		}
		p, err := s.restorePlant(id, name, tag)
		if err != nil {
			return nil, err
		}
		plants = append(plants, p)
	}
	return plants, rows.Err()
}
