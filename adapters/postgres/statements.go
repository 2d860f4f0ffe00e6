package postgres

import (
	"context"
	"sync"

	"github.com/jmoiron/sqlx"
)

// rereadPlants reads stored plants back with a fresh snapshot.
const rereadPlants = `SELECT id, name, tag FROM plants WHERE id = ANY($1::bigint[])`

// statements holds the prepared statements, by their text. They are
// prepared on the pool, not on one connection: database/sql prepares them
// again on whichever connection runs them, so a connection that dies takes
// nothing with it. Preparing waits for first use because the table exists
// only after Migrate.
type statements struct {
	mu       sync.RWMutex
	prepared map[string]*sqlx.Stmt
}

// get returns the prepared statement of query, preparing it on first use
// (and again after a failed attempt).
func (st *statements) get(ctx context.Context, db *sqlx.DB, query string) (*sqlx.Stmt, error) {
	st.mu.RLock()
	stmt := st.prepared[query]
	st.mu.RUnlock()
	if stmt != nil {
		return stmt, nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if stmt := st.prepared[query]; stmt != nil {
		return stmt, nil
	}
	stmt, err := db.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if st.prepared == nil {
		st.prepared = make(map[string]*sqlx.Stmt)
	}
	st.prepared[query] = stmt
	return stmt, nil
}

func (st *statements) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, stmt := range st.prepared {
		_ = stmt.Close()
	}
	st.prepared = nil
}
