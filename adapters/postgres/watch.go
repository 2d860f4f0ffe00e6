package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// serverWatch is what the store's sessions, of both its pools, learn of the
// server behind them and share: whether it turned read-only (a session
// opened before is retired, see sessions), whether commits the synchronous
// standby never confirmed may have become visible (confirm.go), and which
// sessions are in a call that writes (writeCalls).
type serverWatch struct {
	// readOnlySeen counts the store's meetings with a read-only server.
	readOnlySeen atomic.Uint64
	// losses counts what may have made an unconfirmed commit visible: a
	// session the server or the network ended, a wait for the standby cut
	// short, a server the store had not met (restarted, or another one
	// promoted). A confirmation covers the losses counted before it began.
	losses atomic.Uint64
	// server is the start time of the server last met, as PostgreSQL
	// gives it (pg_postmaster_start_time): another one is another server.
	server atomic.Pointer[string]
	writes writeCalls
}

// meet notes the server whose postmaster started at started, met by a new
// session: a server the store has not met, or met before its restart, may
// show commits whose wait for the standby its crash or a terminated
// session ended, and a promoted standby has its new standby still to catch
// up.
func (w *serverWatch) meet(started string) {
	if last := w.server.Swap(&started); last == nil || *last != started {
		w.losses.Add(1)
	}
}

// noteEnd counts err, what a session's call ended with, as a loss when the
// server or the network ended the session, or cut a commit's wait for the
// standby short. A session the store cut itself, at its caller's deadline,
// is no loss: its server is as it was.
func (w *serverWatch) noteEnd(err error) {
	if err != nil && endedByServer(err) {
		w.losses.Add(1)
	}
}

func endedByServer(err error) bool {
	if errors.Is(err, errUnconfirmed) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	if pqErr := pq.As(err); pqErr != nil {
		switch pqErr.Code {
		case pqerror.AdminShutdown, pqerror.CrashShutdown, pqerror.CannotConnectNow:
			return true
		}
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) && !netErr.Timeout()
}

// serverStarted asks the server of conn, a new session, when its
// postmaster started.
func serverStarted(ctx context.Context, conn driver.Conn) (string, error) {
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return "", errors.New("pq: the connection cannot query")
	}
	rows, err := q.QueryContext(ctx, "SELECT pg_postmaster_start_time()::text", nil)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		return "", err
	}
	switch v := dest[0].(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", errors.New("pq: pg_postmaster_start_time() is not text")
}

// writeCalls are the sessions in a call that writes. Such a call is never
// cut short at its caller's deadline (see session.begin): its commit may be
// waiting for the synchronous standby, and PostgreSQL makes a commit whose
// wait is cancelled visible at once, unconfirmed. The caller is answered at
// its deadline all the same; the session stays with the call until it
// ends, or until closing the store cuts it (severAll).
type writeCalls struct {
	mu      sync.Mutex
	calls   map[*session]struct{}
	severed bool
}

// begin notes s in a call that writes. Once the calls are severed, s is
// cut at once.
func (w *writeCalls) begin(s *session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.severed {
		s.sever()
		return
	}
	if w.calls == nil {
		w.calls = make(map[*session]struct{})
	}
	w.calls[s] = struct{}{}
}

func (w *writeCalls) end(s *session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.calls, s)
}

// severAll cuts the socket of every call that writes, now and from now
// on, for a store that closes. The server is not asked to cancel anything:
// a commit waiting for the standby goes on waiting there, not visible,
// until the standby confirms it or the server ends.
func (w *writeCalls) severAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.severed = true
	for s := range w.calls {
		s.sever()
	}
}
