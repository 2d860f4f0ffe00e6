package httpapi

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// ConnLimit caps the connections an HTTP server holds open, in total and
// for each client address. Every open connection costs a goroutine and its
// buffers, and while a request is served, its body: without a cap, idle
// keep-alive clients or a stall under load grow memory until the kernel
// kills the process. With one, memory and goroutines stay bounded whatever
// clients do; with a share for each client address, no one client can fill
// the cap and keep the others out.
//
// A connection counts from its accept until it closes, or until its last
// answer is out and it is only closing (net/http lingers half a second on
// such a connection, so that its client reads the answer rather than a
// reset). At the cap, or at its client's share, a new connection takes the
// place of one that is not in a request, as nginx does for idle ones: first
// the one that has waited the longest for its first request head, once it
// has waited waitingGrace (a client that opened a connection and sent no
// whole request since has done nothing yet, and a slowloris client never
// will), then the one idle the longest (a keep-alive connection between
// requests). At its client's share only that
// client's own connections give way. When none can, the new connection is
// answered with a canned refusal as soon as its request starts to arrive,
// without its request being read, and closed.
//
// Refusing is bounded too: with refusalsInFlight refusals in progress, the
// listener stops accepting until one ends or room is made, and the
// connections behind it wait in the kernel's listen queue, to be answered
// in their turn rather than closed unanswered. One client address may have
// its share of them in progress; its connections beyond that are
// closed at once, unanswered, so that its flood never holds up the listener
// for the others.
type ConnLimit struct {
	max            int // connections counted at once
	perClient      int // of them, from one client address
	clientRefusals int // refusals in progress for one client address
	hooks          connHooks

	mu      sync.Mutex
	open    int                      // connections counted
	closing int                      // answered connections closing, no longer counted
	clients map[clientKey]*clientUse // what each client address holds
	waiting connList                 // counted connections with no request yet, the oldest first
	idle    connList                 // counted keep-alive connections between requests, idle the longest first

	refusing chan struct{} // a slot per refusal in progress
	room     chan struct{} // told, without blocking, when a connection turns idle or closes
}

// clientUse is what one client address holds of the limit.
type clientUse struct {
	open     int // connections counted
	refusing int // refusals in progress
}

// connHooks are what the owner of a ConnLimit answers, logs and counts.
type connHooks struct {
	// refusal is the whole answer to a connection refused at the cap (or,
	// with ofClient, at its client's share); it logs and counts the
	// refusal.
	refusal func(ofClient bool) []byte
	// shed is told of a connection closed for the limit's sake: to make
	// room (evictedIdle, evictedWaiting), at the head's deadline
	// (headTimeout) or at once when its client has refusals enough in
	// progress (dropped); waited is how long it was idle, or had waited
	// for its request.
	shed func(why shedReason, waited time.Duration)
	// open is told how many connections are counted, whenever that changes.
	open func(n int)
}

// shedReason is why the limit closed a connection.
type shedReason int

const (
	evictedIdle shedReason = iota
	evictedWaiting
	headTimeout
	dropped
)

// DefaultMaxConnections is the service's default cap on the API listener's
// open connections. Each connection busy with a body at the default limit
// holds about 100 KB (its body, buffers and goroutine); 512 of them keep the
// live heap near 55 MB, well inside the 96 MiB soft memory limit the service
// sets in the Kubernetes manifest's 128 MiB container, while 1024 took the
// process past 128 MiB (docs/operations.md, "Admission").
const DefaultMaxConnections = 512

// waitingGrace is how long a new connection may wait for its first request
// before it can be closed to make room: its request is on its way, or in
// the kernel's buffer for the server to read, and closing it would fail a
// request that was sent. Past it, such a connection is the first to give
// way.
const waitingGrace = time.Second

// refusalsInFlight bounds the refusals being answered at once, each a
// goroutine that waits at most lingerTime for the request and lingerTime
// for the client to close: a flood of connections beyond
// the cap costs that much and no more, the rest of it waiting in the
// kernel's listen queue. A client address's part of them is its share of
// the cap's part of them.
const refusalsInFlight = 64

// newConnLimit caps the open connections at max (DefaultMaxConnections when
// not positive), and those of one client address at perClient (the whole
// cap when not positive or over it).
func newConnLimit(max, perClient int, hooks connHooks) *ConnLimit {
	if max <= 0 {
		max = DefaultMaxConnections
	}
	if perClient <= 0 || perClient > max {
		perClient = max
	}
	return &ConnLimit{
		max:            max,
		perClient:      perClient,
		clientRefusals: (refusalsInFlight*perClient + max - 1) / max,
		hooks:          hooks,
		clients:        make(map[clientKey]*clientUse),
		refusing:       make(chan struct{}, refusalsInFlight),
		room:           make(chan struct{}, 1),
	}
}

// Limit caps ln, the listener srv serves, and makes the limit follow the
// states of srv's connections (it sets srv.ConnState and srv.ConnContext,
// keeping hooks set before). srv must serve the listener returned, and that
// listener must be the outermost: the limit knows a connection by what its
// Accept returns.
func (l *ConnLimit) Limit(srv *http.Server, ln net.Listener) net.Listener {
	beforeState, beforeContext := srv.ConnState, srv.ConnContext
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		l.track(c, s)
		if beforeState != nil {
			beforeState(c, s)
		}
	}
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if beforeContext != nil {
			ctx = beforeContext(ctx, c)
		}
		if lc, ok := c.(*limitedConn); ok && lc.limit == l {
			ctx = context.WithValue(ctx, limitedConnKey{}, lc)
		}
		return ctx
	}
	return &limitedListener{Listener: ln, limit: l, closed: make(chan struct{})}
}

// openCount is how many connections the limit counts now.
func (l *ConnLimit) openCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// admit counts c, from client, as open when there is room, or room can be
// made by closing a connection not in a request, and returns it as the
// server is to see it. It returns nil when there is none, and whether it
// was the client's share that was full.
func (l *ConnLimit) admit(c net.Conn, client clientKey) (admitted *limitedConn, ofClient bool) {
	now := time.Now()
	l.mu.Lock()
	use := l.clients[client]
	var evicted *limitedConn
	switch {
	case use != nil && use.open >= l.perClient && l.perClient < l.max:
		if evicted = l.waiting.firstOf(&client, now); evicted == nil {
			evicted = l.idle.firstOf(&client, time.Time{})
		}
		if evicted == nil {
			l.mu.Unlock()
			return nil, true
		}
	case l.open >= l.max:
		if evicted = l.waiting.firstOf(nil, now); evicted == nil {
			evicted = l.idle.front
		}
		if evicted == nil {
			l.mu.Unlock()
			return nil, false
		}
	}
	var why shedReason
	var waited time.Duration
	if evicted != nil {
		why, waited = evictedWaiting, now.Sub(evicted.since)
		if evicted.phase == phaseIdle {
			why = evictedIdle
		}
		l.uncount(evicted, phaseGone)
	}
	if use = l.clients[client]; use == nil {
		use = &clientUse{}
		l.clients[client] = use
	}
	admitted = &limitedConn{Conn: c, limit: l, client: client, phase: phaseWaiting, since: now}
	use.open++
	l.open++
	l.waiting.pushBack(admitted)
	l.hooks.open(l.open)
	l.mu.Unlock()
	if evicted != nil {
		// Its server goroutine, waiting for a request, sees the
		// connection closed and ends; the limit has stopped counting it.
		_ = evicted.Conn.Close()
		l.hooks.shed(why, waited)
	}
	return admitted, false
}

// track follows a connection's state as the server reports it. A
// connection the limit does not count (closed to make room, closing, or
// accepted by another listener) is left alone, but for its close.
func (l *ConnLimit) track(c net.Conn, s http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok || lc.limit != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateIdle:
		if !lc.counted() {
			return
		}
		l.unlist(lc)
		lc.phase, lc.since = phaseIdle, time.Now()
		lc.sent.Store(false)
		l.idle.pushBack(lc)
		l.roomMade()
	case http.StateActive:
		if !lc.counted() {
			return
		}
		l.unlist(lc)
		lc.phase = phaseActive
	case http.StateClosed, http.StateHijacked:
		// A hijacked connection is its handler's to bound.
		switch {
		case lc.phase == phaseClosing:
			l.closing--
		case lc.counted():
			l.uncount(lc, phaseGone)
		}
		lc.phase = phaseGone
		l.roomMade()
	}
}

// uncount stops counting lc, which is left in phase. The caller holds mu.
func (l *ConnLimit) uncount(lc *limitedConn, phase connPhase) {
	l.unlist(lc)
	lc.phase = phase
	use := l.clients[lc.client]
	use.open--
	l.forgetIdleClient(lc.client, use)
	l.open--
	l.hooks.open(l.open)
}

// forgetIdleClient drops client from the map once it holds nothing, so
// that the map stays as small as what is counted. The caller holds mu.
func (l *ConnLimit) forgetIdleClient(client clientKey, use *clientUse) {
	if use.open == 0 && use.refusing == 0 {
		delete(l.clients, client)
	}
}

// unlist takes lc out of the list of its phase, if it is in one. The
// caller holds mu.
func (l *ConnLimit) unlist(lc *limitedConn) {
	switch {
	case !lc.listed:
	case lc.phase == phaseWaiting:
		l.waiting.remove(lc)
	case lc.phase == phaseIdle:
		l.idle.remove(lc)
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
