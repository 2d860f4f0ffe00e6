package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// sessions opens the store's connections through lib/pq and holds each of
// them to the promises the store makes about its answers:
//
//   - A session never waits past its caller's deadline (see link): a login
//     that never completes, a statement stuck in a network that drops
//     packets, fail at the deadline instead of when TCP gives up, and the
//     session is dropped. A call that writes is the exception: its commit
//     may be waiting for the synchronous standby, and is never cut short
//     (writeCalls); the caller is answered at its deadline all the same.
//   - A statement whose commit PostgreSQL reports with a warning (a wait
//     for the synchronous standby that was cancelled or cut short) fails
//     with errUnconfirmed instead of succeeding (see unconfirmed.go).
//   - Every session opened before the store last met a read-only server
//     (SQLSTATE 25006) is retired at its next use. A primary that became a
//     standby, or was fenced read-only, keeps its sessions open; without
//     this, each would fail every request sent on it until its lifetime
//     ended, while new sessions (target_session_attrs=read-write) would
//     reach the new primary.
//   - What the server or the network did to a session, and which server a
//     new session reached, is told to the store's serverWatch, which
//     decides when what the store reads must be confirmed (confirm.go).
type sessions struct {
	pq    *pq.Connector
	watch *serverWatch
	// loginTimeout bounds the dial and login of a new session, whatever
	// context database/sql opens it with (its own opener's has no end).
	loginTimeout time.Duration
}

// newSessions is the connector of a pool of the store's sessions to
// PostgreSQL through c, each login bounded by loginTimeout (loginBound).
func newSessions(c *pq.Connector, watch *serverWatch, loginTimeout time.Duration) sessions {
	c.Dialer(dialer{d: sessionDialer})
	return sessions{pq: c, watch: watch, loginTimeout: loginTimeout}
}

// minLoginTimeout is the least time a login is given: several round trips
// (the connection, the start-up, authentication, the server's start time),
// which a query timeout of milliseconds would leave no session to open on
// a busy machine.
const minLoginTimeout = time.Second

func (c sessions) Connect(ctx context.Context) (driver.Conn, error) {
	born := c.watch.readOnlySeen.Load()
	ctx, cancel := context.WithTimeout(ctx, c.loginTimeout)
	defer cancel()
	l := &link{}
	stop := context.AfterFunc(ctx, l.sever)
	conn, err := c.pq.Connect(withLink(ctx, l))
	var started string
	if err == nil {
		started, err = serverStarted(ctx, conn)
		if err != nil {
			_ = conn.Close()
		}
	}
	if !stop() && err == nil {
		// Cut at the deadline: whatever the login got to, the session's
		// socket is unusable.
		_ = conn.Close()
		err = fmt.Errorf("pq: login: %w", ctx.Err())
	}
	if err != nil {
		return nil, err
	}
	c.watch.meet(started)
	s := &session{Conn: conn, nc: l.conn(), born: born, watch: c.watch}
	pq.SetNoticeHandler(conn, s.notice)
	return s, nil
}

func (c sessions) Driver() driver.Driver { return c.pq.Driver() }

// noteReadOnly retires the store's sessions when err says that the server is
// read-only.
func (s *Store) noteReadOnly(err error) {
	if pqErr := pq.As(err); pqErr != nil && pqErr.Code == pqerror.ReadOnlySQLTransaction {
		s.watch.readOnlySeen.Add(1)
	}
}

// session is one lib/pq connection. Each call that talks to the server
// first bounds its socket by the call's deadline (begin), and each call that
// may commit ends by checking the warnings the server sent meanwhile (end).
// database/sql drops the session once it is stale: it says so when it is
// handed back (IsValid) and before it is reused (ResetSession). It passes
// every other call to lib/pq's connection.
type session struct {
	driver.Conn
	nc    net.Conn // the socket under lib/pq's connection
	born  uint64
	watch *serverWatch
	// warning is the latest warning the server sent during the current
	// call. database/sql hands a session to one goroutine at a time, and
	// lib/pq calls the notice handler from the read of the call that
	// receives it, so no lock is needed.
	warning *pq.Error
	// writes says that the current call writes (see writing).
	writes bool
}

// writingKey marks the context of a call whose statement writes.
type writingKey struct{}

// writing marks ctx as the context of statements that write. database/sql
// runs a statement again on another session when the driver reports a bad
// connection (driver.ErrBadConn), which lib/pq also reports for a
// connection lost after the statement was sent. For a write that is wrong:
// it may have committed, and running it again answers what the second run
// found (a delete that finds nothing, a create that finds its own plant).
// A call under such a context reports a connection lost after it began as
// errConnLost instead, whose outcome is unknown.
func writing(ctx context.Context) context.Context { return context.WithValue(ctx, writingKey{}, true) }

// errConnLost is a connection lost during a write: its outcome is unknown.
var errConnLost = fmt.Errorf("connection lost during a write: %w", io.ErrUnexpectedEOF)

func (c *session) stale() bool { return c.born != c.watch.readOnlySeen.Load() }

// begin starts a call under ctx and returns the context to hand lib/pq:
// warnings from before are forgotten, and the socket fails reads and
// writes past ctx's deadline (a call without one clears the last call's).
// A call that writes is neither cut nor cancelled at that deadline: lib/pq
// gets a context that never ends, and the socket no deadline, so that a
// commit waiting for the synchronous standby goes on waiting, not visible,
// until the standby confirms it (writeCalls). A server that dies, or a
// network that does, ends the call by the socket's keepalive
// (sessionDialer).
func (c *session) begin(ctx context.Context) context.Context {
	c.warning = nil
	c.writes = ctx.Value(writingKey{}) != nil
	deadline, _ := ctx.Deadline()
	if c.writes {
		if c.nc != nil {
			_ = c.nc.SetDeadline(time.Time{})
		}
		c.watch.writes.begin(c)
		return context.WithoutCancel(ctx)
	}
	if c.nc != nil {
		_ = c.nc.SetDeadline(deadline)
	}
	return ctx
}

// end finishes a call that returned err: a warning the server sent with a
// commit (see unconfirming) makes the call's outcome unknown, whatever err
// says, and so does a connection lost during a write (see writing). What
// the call met is told to the watch.
func (c *session) end(err error) error {
	if c.writes {
		c.watch.writes.end(c)
	}
	if w := c.warning; w != nil {
		c.warning = nil
		err = &unconfirmedError{warning: w, err: err}
	} else if c.writes && errors.Is(err, driver.ErrBadConn) {
		err = errConnLost
	}
	c.watch.noteEnd(err)
	return err
}

// sever cuts the session's socket: every read and write on it fails at
// once, and lib/pq drops the session.
func (c *session) sever() {
	if c.nc != nil {
		_ = c.nc.SetDeadline(past)
	}
}

// usable reports whether lib/pq still holds the session good. A call on
// one it does not is refused before anything is sent, as driver.ErrBadConn,
// which database/sql safely answers by taking another session.
func (c *session) usable() bool {
	v, ok := c.Conn.(driver.Validator)
	return !ok || v.IsValid()
}

// notice is lib/pq's notice handler of the session.
func (c *session) notice(e *pq.Error) {
	if unconfirming(e) {
		c.warning = e
	}
}

// goodbyeTimeout bounds the goodbye a session sends the server when it
// closes: its socket may still carry the deadline of its last call, long
// past, and a link that drops packets must not hold a close.
const goodbyeTimeout = time.Second

// Close says goodbye to the server and closes the socket. A goodbye that
// could not be sent is no failure to close: the server ends the session
// when the socket closes.
func (c *session) Close() error {
	if c.nc != nil {
		_ = c.nc.SetDeadline(time.Now().Add(goodbyeTimeout))
	}
	if err := c.Conn.Close(); err != nil {
		var netErr net.Error
		if !errors.As(err, &netErr) {
			return err
		}
	}
	return nil
}

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
	ctx = c.begin(ctx)
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, c.end(err)
	}
	return &sessionTx{Tx: tx, s: c}, nil
}

func (c *session) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	ctx = c.begin(ctx)
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, c.end(err)
	}
	return &sessionStmt{Stmt: st, s: c}, nil
}

func (c *session) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if !c.usable() {
		return nil, driver.ErrBadConn
	}
	ctx = c.begin(ctx)
	rows, err := c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
	if err != nil {
		return nil, c.end(err)
	}
	return &sessionRows{Rows: rows, s: c}, nil
}

func (c *session) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if !c.usable() {
		return nil, driver.ErrBadConn
	}
	ctx = c.begin(ctx)
	res, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
	return res, c.end(err)
}

func (c *session) Ping(ctx context.Context) error {
	ctx = c.begin(ctx)
	return c.end(c.Conn.(driver.Pinger).Ping(ctx))
}

func (c *session) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}
