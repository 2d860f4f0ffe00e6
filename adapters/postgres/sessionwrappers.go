package postgres

import (
	"context"
	"database/sql/driver"
	"io"
)

// sessionTx is a transaction on a session: its commit is checked for
// warnings like a statement's.
type sessionTx struct {
	driver.Tx
	s *session
}

func (t *sessionTx) Commit() error {
	t.s.warning = nil
	return t.s.end(t.Tx.Commit())
}

// sessionStmt is a statement prepared on a session: each run is bounded
// and checked as the session's own calls are.
type sessionStmt struct {
	driver.Stmt
	s *session
}

func (st *sessionStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if !st.s.usable() {
		return nil, driver.ErrBadConn
	}
	ctx = st.s.begin(ctx)
	res, err := st.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	return res, st.s.end(err)
}

func (st *sessionStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if !st.s.usable() {
		return nil, driver.ErrBadConn
	}
	ctx = st.s.begin(ctx)
	rows, err := st.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, st.s.end(err)
	}
	return &sessionRows{Rows: rows, s: st.s}, nil
}

// sessionRows are the rows of a statement run on a session. The server
// commits a statement run on its own after its last row and before it says
// it is ready for the next (ReadyForQuery), which is when lib/pq's Next
// reports the end: a warning of the commit turns that end into an error.
type sessionRows struct {
	driver.Rows
	s *session
}

func (r *sessionRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err == io.EOF {
		if unconfirmed := r.s.end(nil); unconfirmed != nil {
			return unconfirmed
		}
	}
	return err
}

func (r *sessionRows) Close() error { return r.s.end(r.Rows.Close()) }

func (r *sessionRows) HasNextResultSet() bool {
	m, ok := r.Rows.(driver.RowsNextResultSet)
	return ok && m.HasNextResultSet()
}

func (r *sessionRows) NextResultSet() error {
	if m, ok := r.Rows.(driver.RowsNextResultSet); ok {
		return m.NextResultSet()
	}
	return io.EOF
}
