package postgres

import (
	"context"
	"net"
	"sync"
	"time"
)

// A session's socket is bounded by deadlines, not only by lib/pq's
// cancellation. lib/pq answers the end of a context by sending the server a
// cancel request on a second connection and waiting for the statement's
// answer on the first; when the network drops packets, neither arrives and
// the caller waits until TCP gives up, minutes later. A deadline on the
// socket itself ends that wait at the caller's deadline.

// dialer is lib/pq's dialer for the store's sessions: net.Dialer's, which
// also attaches each new socket to the link of the session being opened, so
// that its login can be cut at the deadline.
//
// Every session is dialed with its link (sessions.Connect), through
// lib/pq's hosts, retries and target_session_attrs alike. The other sockets
// lib/pq dials carry cancel requests: at the end of a statement's context
// it dials the server, sends the request and reads until the server closes
// the socket, with no deadline but the dial's, and the statement's call
// waits for that. A server, pooler or network that accepts the socket and
// never closes it would hold the call, its batch, and the store's Close,
// for ever: such a socket is given cancelTimeout, in all, to be dialed,
// sent and closed. A dial without a link is therefore never a session's.
type dialer struct{ d net.Dialer }

// sessionDialer dials the store's sessions. A call that writes waits on
// its session without a deadline (see session.begin), so a server or a
// network that dies under it must end it some other way: keepalive probes
// find an idle socket whose peer is gone in idle + count × interval, about
// ten seconds, and the user timeout (userTimeout) one whose sent data goes
// unacknowledged as long.
var sessionDialer = net.Dialer{
	KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 4 * time.Second, Interval: 2 * time.Second, Count: 3},
	Control:         userTimeout(10 * time.Second),
}

// cancelTimeout bounds a cancel request (see dialer): the dial, a TLS
// handshake where the URL asks for one, the request and the server's
// close, about four round trips. A server that is up answers at once; one
// that is not has nothing to cancel.
const cancelTimeout = 2 * time.Second

func (d dialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

func (d dialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

func (d dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	l, session := ctx.Value(linkKey{}).(*link)
	if !session {
		end := time.Now().Add(cancelTimeout)
		ctx, cancel := context.WithDeadline(ctx, end)
		defer cancel()
		nc, err := d.d.DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		_ = nc.SetDeadline(end)
		return boundedConn{Conn: nc, end: end}, nil
	}
	nc, err := d.d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	l.attach(nc)
	return nc, nil
}

// boundedConn is a socket whose deadlines never pass end: lib/pq sets its
// own on a socket it dials when the URL has a connect_timeout, which must
// not lift a cancel request's bound.
type boundedConn struct {
	net.Conn
	end time.Time
}

func (c boundedConn) SetDeadline(t time.Time) error      { return c.Conn.SetDeadline(c.bound(t)) }
func (c boundedConn) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(c.bound(t)) }
func (c boundedConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.bound(t)) }

func (c boundedConn) bound(t time.Time) time.Time {
	if t.IsZero() || t.After(c.end) {
		return c.end
	}
	return t
}

// link is the socket of a session being opened. lib/pq's login reads from
// it without a context (only connect_timeout bounds it, and only until the
// login is done, not the check of target_session_attrs after it), so the
// end of the context cuts it instead: every later read and write fails at
// once.
type link struct {
	mu      sync.Mutex
	nc      net.Conn // the latest socket dialed: lib/pq tries a URL's hosts in turn
	severed bool
}

type linkKey struct{}

// withLink is ctx carrying l for the dialer.
func withLink(ctx context.Context, l *link) context.Context {
	return context.WithValue(ctx, linkKey{}, l)
}

// past is a deadline that has passed: reads and writes fail at once.
var past = time.Unix(1, 0)

func (l *link) attach(nc net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nc = nc
	if l.severed {
		_ = nc.SetDeadline(past)
	}
}

// sever makes the socket fail now, and any socket attached later.
func (l *link) sever() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.severed = true
	if l.nc != nil {
		_ = l.nc.SetDeadline(past)
	}
}

func (l *link) conn() net.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nc
}
