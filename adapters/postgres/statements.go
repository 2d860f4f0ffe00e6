package postgres

import (
	"context"
	"sync"

	"github.com/jmoiron/sqlx"
)

// statement is a query the store runs with arguments: a prepared statement,
// or its text sent with every run.
type statement interface {
	QueryxContext(ctx context.Context, args ...any) (*sqlx.Rows, error)
}

// unprepared runs its text on db each time, as the unnamed statement, which
// a transaction pooler may send to any server session.
type unprepared struct {
	db   sqlx.QueryerContext
	text string
}

func (u unprepared) QueryxContext(ctx context.Context, args ...any) (*sqlx.Rows, error) {
	return u.db.QueryxContext(ctx, u.text, args...)
}

// statements holds the prepared statements, by their text. They are
// prepared on the pool, not on one connection: database/sql prepares them
// again on whichever connection runs them, so a connection that dies takes
// nothing with it. Preparing waits for first use because the table exists
// only after Migrate. With unprepared set (through a transaction pooler,
// whose server sessions are not the store's), nothing is prepared.
type statements struct {
	unprepared bool

	mu       sync.RWMutex
	prepared map[string]*sqlx.Stmt
}

// get returns the statement of query, preparing it on first use (and again
// after a failed attempt).
func (st *statements) get(ctx context.Context, db *sqlx.DB, query string) (statement, error) {
	if st.unprepared {
		return unprepared{db: db, text: query}, nil
	}
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
