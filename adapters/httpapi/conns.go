package httpapi

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// ConnLimit caps the connections an HTTP server holds open. Every open
// connection costs a goroutine and its buffers, and while a request is
// served, its body: without a cap, idle keep-alive clients or a stall under
// load grow memory until the kernel kills the process. With one, memory and
// goroutines stay bounded whatever clients do.
//
// At the cap a new connection takes the place of the one that has been idle
// (a keep-alive connection between requests) the longest, as nginx does: a
// client that is not using its connection gives way to one that wants to.
// When no connection is idle, the new one is answered with a canned
// refusal as soon as its request starts to arrive, without its request
// being read, and closed. Refusing is bounded
// too: with refusalsInFlight refusals in progress, the listener stops
// accepting until one ends or room is made, and the connections behind it
// wait in the kernel's listen queue, to be answered in their turn rather
// than closed unanswered.
type ConnLimit struct {
	max   int
	hooks connHooks

	mu    sync.Mutex
	conns map[net.Conn]*trackedConn
	idle  idleList // the one idle the longest first

	refusing chan struct{} // a slot per refusal in progress
	room     chan struct{} // told, without blocking, when a connection turns idle or closes
}

// connHooks are what the owner of a ConnLimit answers, logs and counts.
type connHooks struct {
	// refusal is the whole answer to a connection refused at the cap; it
	// logs and counts the refusal.
	refusal func() []byte
	// closedIdle is told of an idle connection closed to make room.
	closedIdle func(idleFor time.Duration)
	// open is told how many connections are open, whenever that changes.
	open func(n int)
}

// trackedConn is what the limit knows of one open connection. A connection
// turns idle and active again with every request, so the idle list is
// threaded through the connections themselves: following one costs no
// allocation.
type trackedConn struct {
	conn       net.Conn
	prev, next *trackedConn // its neighbours in ConnLimit.idle while idle
	idle       bool
	since      time.Time // when it last became idle
}

// idleList is the idle connections, in the order they became idle.
type idleList struct {
	front, back *trackedConn
	n           int
}

func (l *idleList) pushBack(t *trackedConn) {
	t.prev, t.next, t.idle = l.back, nil, true
	if l.back != nil {
		l.back.next = t
	} else {
		l.front = t
	}
	l.back = t
	l.n++
}

func (l *idleList) remove(t *trackedConn) {
	if !t.idle {
		return
	}
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		l.front = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		l.back = t.prev
	}
	t.prev, t.next, t.idle = nil, nil, false
	l.n--
}

// DefaultMaxConnections is the service's default cap on the API listener's
// open connections. Each connection busy with a body at the default limit
// holds about 100 KB (its body, buffers and goroutine); 512 of them keep the
// live heap near 55 MB, well inside the 96 MiB soft memory limit the service
// sets in the Kubernetes manifest's 128 MiB container, while 1024 took the
// process past 128 MiB (docs/operations.md, "Admission").
const DefaultMaxConnections = 512

// refusalsInFlight bounds the refusals being answered at once, each a
// goroutine that waits at most lingerTime for the request and lingerTime
// for the client to close: a flood of connections beyond
// the cap costs that much and no more, the rest of it waiting in the
// kernel's listen queue.
const refusalsInFlight = 64

func newConnLimit(max int, hooks connHooks) *ConnLimit {
	if max <= 0 {
		max = DefaultMaxConnections
	}
	return &ConnLimit{
		max:      max,
		hooks:    hooks,
		conns:    make(map[net.Conn]*trackedConn, max),
		refusing: make(chan struct{}, refusalsInFlight),
		room:     make(chan struct{}, 1),
	}
}

// Limit caps ln, the listener srv serves, and makes the limit follow the
// states of srv's connections (it sets srv.ConnState, keeping a hook set
// before). srv must serve the listener returned, and that listener must be
// the outermost: the limit knows a connection by what its Accept returns.
func (l *ConnLimit) Limit(srv *http.Server, ln net.Listener) net.Listener {
	before := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		l.track(c, s)
		if before != nil {
			before(c, s)
		}
	}
	return &limitedListener{Listener: ln, limit: l, closed: make(chan struct{})}
}

// openCount is how many connections the limit holds open now.
func (l *ConnLimit) openCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

type limitedListener struct {
	net.Listener
	limit *ConnLimit

	closeOnce sync.Once
	closed    chan struct{} // closed by Close, to end a wait for a refusal
}

// Accept returns the next connection the cap admits, and refuses the others
// itself.
func (ln *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		admitted, err := ln.limit.admitOrRefuse(c, ln.closed)
		if err != nil {
			return nil, err
		}
		if admitted {
			return c, nil
		}
	}
}

func (ln *limitedListener) Close() error {
	ln.closeOnce.Do(func() { close(ln.closed) })
	return ln.Listener.Close()
}

// admitOrRefuse admits c, or refuses it in the background and reports that
// it did not admit it. With the most refusals in progress it waits for one
// to end, or for room to be made, which admits c after all; the
// connections accepted after c wait meanwhile in the kernel's queue. When
// the listener closes first, c is closed and the error is net.ErrClosed.
func (l *ConnLimit) admitOrRefuse(c net.Conn, closed <-chan struct{}) (bool, error) {
	for {
		if l.admit(c) {
			return true, nil
		}
		select {
		case l.refusing <- struct{}{}:
			answer := l.hooks.refusal()
			go func() {
				defer func() { <-l.refusing }()
				answerUnread(c, answer)
			}()
			return false, nil
		case <-l.room:
		case <-closed:
			_ = c.Close()
			return false, net.ErrClosed
		}
	}
}

// admit counts c as open when there is room, or room can be made by closing
// the connection idle the longest, and reports whether it did.
func (l *ConnLimit) admit(c net.Conn) bool {
	l.mu.Lock()
	var evicted net.Conn
	var idleFor time.Duration
	if len(l.conns) >= l.max {
		oldest := l.idle.front
		if oldest == nil {
			l.mu.Unlock()
			return false
		}
		evicted, idleFor = oldest.conn, time.Since(oldest.since)
		l.forget(evicted)
	}
	l.conns[c] = &trackedConn{conn: c}
	l.hooks.open(len(l.conns))
	l.mu.Unlock()
	if evicted != nil {
		// Its server goroutine, waiting for a next request, sees the
		// connection closed and ends; the limit has forgotten it already.
		_ = evicted.Close()
		l.hooks.closedIdle(idleFor)
	}
	return true
}

// track follows a connection's state as the server reports it. A
// connection the limit does not know (closed to make room, or accepted by
// another listener) is left alone.
func (l *ConnLimit) track(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.conns[c]
	if !ok {
		return
	}
	switch s {
	case http.StateIdle:
		l.idle.remove(t)
		t.since = time.Now()
		l.idle.pushBack(t)
		l.roomMade()
	case http.StateActive:
		l.idle.remove(t)
	case http.StateClosed, http.StateHijacked:
		// A hijacked connection is its handler's to bound.
		l.forget(c)
		l.hooks.open(len(l.conns))
		l.roomMade()
	}
}

// roomMade tells a connection waiting to be refused that it may be admitted
// now. The signal may be stale when read: admitting checks again.
func (l *ConnLimit) roomMade() {
	select {
	case l.room <- struct{}{}:
	default:
	}
}

// forget stops counting c. The caller holds mu.
func (l *ConnLimit) forget(c net.Conn) {
	if t := l.conns[c]; t != nil {
		l.idle.remove(t)
	}
	delete(l.conns, c)
}
