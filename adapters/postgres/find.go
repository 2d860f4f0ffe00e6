package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/plantstore/plantstore/domain"
)

// findPlant reads one plant by its primary key.
const findPlant = `SELECT name, tag FROM plants WHERE id = $1`

// FindPlant returns the plant stored under id and true, or false when none
// is. It reads committed rows only: every acknowledged create is there.
func (s *Store) FindPlant(ctx context.Context, id domain.ID) (domain.Plant, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	stmt, err := s.stmts.get(ctx, s.db, findPlant)
	if err != nil {
		return domain.Plant{}, false, s.fail("find", err)
	}
	var name, tag sql.NullString
	err = stmt.QueryRowxContext(ctx, int64(id)).Scan(&name, &tag)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return domain.Plant{}, false, nil
	case err != nil:
		return domain.Plant{}, false, s.fail("find", err)
	}
	p, err := s.restorePlant(int64(id), name, tag)
	return p, err == nil, err
}
