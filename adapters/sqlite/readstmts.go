package sqlite

import (
	"context"
	"errors"
	"sync"

	"github.com/jmoiron/sqlx"
)

// readStatements are the read pool's statements, prepared the first time a
// read runs them (the table may not exist at Open) and kept until Close:
// parsing a statement costs a read by id about as much as running it, the
// more so as the row shape's column lists grow. database/sql prepares each
// on every connection of the pool as it is used there. Safe for concurrent
// use.
type readStatements struct {
	prepared sync.Map // text → *sqlx.Stmt
	mu       sync.Mutex
	closed   bool
}

// stmt returns the statement of text prepared on db.
func (r *readStatements) stmt(ctx context.Context, db *sqlx.DB, text string) (*sqlx.Stmt, error) {
	if stmt, ok := r.prepared.Load(text); ok {
		return stmt.(*sqlx.Stmt), nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if stmt, ok := r.prepared.Load(text); ok {
		return stmt.(*sqlx.Stmt), nil
	}
	if r.closed {
		return nil, errClosed
	}
	stmt, err := db.PreparexContext(ctx, text)
	if err != nil {
		return nil, err
	}
	r.prepared.Store(text, stmt)
	return stmt, nil
}

// close closes every statement; a later stmt fails.
func (r *readStatements) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	var errs []error
	r.prepared.Range(func(_, stmt any) bool {
		errs = append(errs, stmt.(*sqlx.Stmt).Close())
		return true
	})
	return errors.Join(errs...)
}

// get runs the read statement text with args and scans its one row into
// dest by column name.
func (s *Store) get(ctx context.Context, dest any, text string, args ...any) error {
	stmt, err := s.reads.stmt(ctx, s.read, text)
	if err != nil {
		return err
	}
	return stmt.GetContext(ctx, dest, args...)
}

// selectRows runs the read statement text with args and scans its rows
// into dest, a pointer to a slice, by column name.
func (s *Store) selectRows(ctx context.Context, dest any, text string, args ...any) error {
	stmt, err := s.reads.stmt(ctx, s.read, text)
	if err != nil {
		return err
	}
	return stmt.SelectContext(ctx, dest, args...)
}
