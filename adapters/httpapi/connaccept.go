package httpapi

import (
	"net"
	"sync"
)

// The limit's listener: what it does with a connection beyond the cap.

type limitedListener struct {
	net.Listener
	limit *ConnLimit

	closeOnce sync.Once
	closed    chan struct{} // closed by Close, to end a wait for a refusal
}

// Accept returns the next connection the limit admits, and refuses the
// others itself.
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
		if admitted != nil {
			return admitted, nil
		}
	}
}

func (ln *limitedListener) Close() error {
	ln.closeOnce.Do(func() { close(ln.closed) })
	return ln.Listener.Close()
}

// admitOrRefuse admits c, or refuses it in the background and returns nil.
// With the most refusals in progress it waits for one to end, or for room
// to be made, which admits c after all; the connections accepted after c
// wait meanwhile in the kernel's queue. A connection whose client already
// has its part of the refusals in progress is closed at once instead. When
// the listener closes first, c is closed and the error is net.ErrClosed.
func (l *ConnLimit) admitOrRefuse(c net.Conn, closed <-chan struct{}) (*limitedConn, error) {
	client := clientOf(c.RemoteAddr())
	for {
		admitted, ofClient := l.admit(c, client)
		if admitted != nil {
			return admitted, nil
		}
		if !l.mayRefuse(client) {
			_ = c.Close()
			l.hooks.shed(dropped, 0)
			return nil, nil
		}
		select {
		case l.refusing <- struct{}{}:
			l.refusalBegins(client)
			answer := l.hooks.refusal(ofClient)
			go func() {
				defer l.refusalEnds(client)
				answerUnread(c, answer)
			}()
			return nil, nil
		case <-l.room:
		case <-closed:
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

// mayRefuse reports whether client may have one refusal more in progress:
// always, when one client may hold the whole cap.
func (l *ConnLimit) mayRefuse(client clientKey) bool {
	if l.perClient == l.max {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	use := l.clients[client]
	return use == nil || use.refusing < l.clientRefusals
}

func (l *ConnLimit) refusalBegins(client clientKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	use := l.clients[client]
	if use == nil {
		use = &clientUse{}
		l.clients[client] = use
	}
	use.refusing++
}

func (l *ConnLimit) refusalEnds(client clientKey) {
	l.mu.Lock()
	use := l.clients[client]
	use.refusing--
	l.forgetIdleClient(client, use)
	l.mu.Unlock()
	<-l.refusing
}
