package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The keyset queries of a page: a range scan of the rowid, or of
// plants_tag_id with a tag, from an inclusive lower bound, in id order.
const (
	listPlants       = `SELECT id, name, tag FROM plants WHERE id >= ? ORDER BY id LIMIT ?`
	listTaggedPlants = `SELECT id, name, tag FROM plants WHERE tag = ? AND id >= ? ORDER BY id LIMIT ?`
)

// ListPlants returns at most q.Limit plants that match q, in ascending id
// order. It reads through the read pool, beside the writer: WAL shows it
// every committed batch.
func (s *Store) ListPlants(ctx context.Context, q application.ListQuery) ([]domain.Plant, error) {
	from, ok := q.From()
	if !ok {
		return nil, nil
	}
	var (
		rows *sql.Rows
		err  error
	)
	if q.Tag.IsSet() {
		rows, err = s.read.QueryContext(ctx, listTaggedPlants, q.Tag.String(), int64(from), q.Limit)
	} else {
		rows, err = s.read.QueryContext(ctx, listPlants, int64(from), q.Limit)
	}
	if err != nil {
		return nil, edgeError("list", err)
	}
	defer rows.Close()
	plants := make([]domain.Plant, 0, q.Limit)
	for rows.Next() {
		var (
			id   int64
			name string
			tag  sql.NullString
		)
		if err := rows.Scan(&id, &name, &tag); err != nil {
			return nil, edgeError("list", err)
		}
		p, err := restore(id, name, tag)
		if err != nil {
			return nil, err
		}
		plants = append(plants, p)
	}
	if err := rows.Err(); err != nil {
		return nil, edgeError("list", err)
	}
	return plants, nil
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
	p, err := domain.RestorePlant(id, name, tagp)
	if err != nil {
		return domain.Plant{}, &rowError{msg: fmt.Sprintf("sqlite: stored plant %d breaks the plant rules: %v", id, err)}
	}
	return p, nil
}
