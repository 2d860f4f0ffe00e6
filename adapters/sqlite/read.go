package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/plantstore/plantstore/domain"
)

// findPlant reads one plant through the read pool, whose statements take
// plain parameters.
var findPlant = `SELECT ` + stateColumns.list() + ` FROM plants WHERE id = ?`

// FindPlant returns the plant stored under id and true, or false when none
// is. It reads through the read pool, beside the writer.
func (s *Store) FindPlant(ctx context.Context, id domain.ID) (domain.Plant, bool, error) {
	var state plantState
	err := s.get(ctx, &state, findPlant, int64(id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return domain.Plant{}, false, nil
	case err != nil:
		return domain.Plant{}, false, edgeError("find", err)
	}
	p, err := state.plant()
	return p, err == nil, err
}
