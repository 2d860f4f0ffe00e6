package httpapi

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"
)

// limitedConn is a connection a ConnLimit admitted, as its server sees it.
// It tells the limit what the server's connection states do not: that its
// last answer is out (net/http shuts the write side of a connection it
// closes, CloseWrite), and that a read met its deadline.
type limitedConn struct {
	net.Conn
	limit  *ConnLimit
	client clientKey
	// sent says that a read returned bytes since the connection last
	// turned idle: a request head had begun.
	sent atomic.Bool

	// The rest is guarded by limit.mu.
	phase      connPhase
	since      time.Time    // when it was admitted, or last turned idle
	prev, next *limitedConn // its neighbours in the limit's list of its phase
	listed     bool
	late       bool // timed out waiting for a request head, counted once
}

// connPhase is where a connection stands with its limit.
type connPhase uint8

const (
	phaseWaiting connPhase = iota // counted, its first request head not read yet
	phaseActive                   // counted, in a request
	phaseIdle                     // counted, kept alive between requests
	phaseClosing                  // answered for the last time and closing, not counted
	phaseGone                     // closed, or closed to make room, not counted
)

func (c *limitedConn) counted() bool { return c.phase <= phaseIdle }

func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.sent.Store(true)
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		c.limit.readTimedOut(c)
	}
	return n, err
}

// CloseWrite is how net/http ends a connection after its last answer: the
// limit stops counting it there, while net/http lingers before the close.
func (c *limitedConn) CloseWrite() error {
	c.limit.answered(c)
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// answered is told that lc's last answer is out and it is only closing: it
// stops counting, and its place is free for another. Closing connections
// are bounded apart, by the cap again: past that they count until they
// close, as before.
func (l *ConnLimit) answered(lc *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !lc.counted() || l.closing >= l.max {
		return
	}
	l.uncount(lc, phaseClosing)
	l.closing++
	l.roomMade()
}

// readTimedOut is told that a read on lc met its deadline: when lc was
// waiting for a request head, net/http closes it for taking too long, and
// the limit counts that.
func (l *ConnLimit) readTimedOut(lc *limitedConn) {
	l.mu.Lock()
	late := !lc.late && (lc.phase == phaseWaiting || (lc.phase == phaseIdle && lc.sent.Load()))
	lc.late = lc.late || late
	waited := time.Since(lc.since)
	l.mu.Unlock()
	if late {
		l.hooks.shed(headTimeout, waited)
	}
}

// limitedConnKey carries a request's limitedConn in its context.
type limitedConnKey struct{}

// answeredLast tells the limit of the connection r came on, if any, that
// its last answer is out: a handler that answers and then lingers to drop
// the rest of a body (refuseUnread) frees its place at once.
func answeredLast(ctx context.Context) {
	if c, ok := ctx.Value(limitedConnKey{}).(*limitedConn); ok {
		c.limit.answered(c)
	}
}

// clientKey is the client address a connection counts against: an IPv4
// address, or an IPv6 /64, which is what one client, one host or one
// site, is given. A connection that is not TCP counts against the zero key.
type clientKey netip.Prefix

func clientOf(addr net.Addr) clientKey {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return clientKey{}
	}
	ip := tcp.AddrPort().Addr().Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return clientKey(p)
}

// connList is a list of connections in the order they joined it. A
// connection turns idle and active again with every request, so the list
// is threaded through the connections themselves: following one costs no
// allocation.
type connList struct {
	front, back *limitedConn
	n           int
}

func (l *connList) pushBack(c *limitedConn) {
	c.prev, c.next, c.listed = l.back, nil, true
	if l.back != nil {
		l.back.next = c
	} else {
		l.front = c
	}
	l.back = c
	l.n++
}

// remove takes c out of l, where it is listed.
func (l *connList) remove(c *limitedConn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.front = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.back = c.prev
	}
	c.prev, c.next, c.listed = nil, nil, false
	l.n--
}

// firstOf is the first connection in l of client (of any client when nil)
// that has been in l for waitingGrace by now (any, when now is zero), or
// nil.
func (l *connList) firstOf(client *clientKey, now time.Time) *limitedConn {
	for c := l.front; c != nil; c = c.next {
		if !now.IsZero() && now.Sub(c.since) < waitingGrace {
			return nil // the rest joined later still
		}
		if client == nil || c.client == *client {
			return c
		}
	}
	return nil
}
