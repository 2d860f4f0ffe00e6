package postgres

import (
	"context"
	"database/sql/driver"
	"sync/atomic"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// sessions opens the store's connections through lib/pq and retires, at
// their next use, every one opened before the store last met a read-only
// server (SQLSTATE 25006). A primary that became a standby, or was fenced
// read-only, keeps its sessions open; without this, each would fail every
// request sent on it until its lifetime ended, while new sessions
// (target_session_attrs=read-write) would reach the new primary.
type sessions struct {
	pq *pq.Connector
	// readOnlySeen counts the store's meetings with a read-only server; a
	// session opened before the latest is retired.
	readOnlySeen *atomic.Uint64
}

func (c sessions) Connect(ctx context.Context) (driver.Conn, error) {
	born := c.readOnlySeen.Load()
	conn, err := c.pq.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &session{Conn: conn, born: born, readOnlySeen: c.readOnlySeen}, nil
}

func (c sessions) Driver() driver.Driver { return c.pq.Driver() }

// noteReadOnly retires the store's sessions when err says that the server is
// read-only.
func (s *Store) noteReadOnly(err error) {
	if pqErr := pq.As(err); pqErr != nil && pqErr.Code == pqerror.ReadOnlySQLTransaction {
		s.readOnlySeen.Add(1)
	}
}

// session is one lib/pq connection that database/sql drops once it is
// stale: it says so when it is handed back (IsValid) and before it is
// reused (ResetSession). It passes every other call to lib/pq's connection.
type session struct {
	driver.Conn
	born         uint64
	readOnlySeen *atomic.Uint64
}

func (c *session) stale() bool { return c.born != c.readOnlySeen.Load() }

func (c *session) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok && !v.IsValid() {
		return false
	}
	return !c.stale()
}

func (c *session) ResetSession(ctx context.Context) error {
	if c.stale() {
		return driver.ErrBadConn
	}
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *session) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *session) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *session) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c *session) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *session) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *session) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}
