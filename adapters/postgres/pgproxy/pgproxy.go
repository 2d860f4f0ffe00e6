// Package pgproxy is a TCP proxy that breaks the link between the service
// and PostgreSQL on demand, for tests: it stalls every connection (packets
// dropped, connections kept, as a network partition or a host that froze
// does), delays every exchange, or resets every connection. A stalled new
// connection is accepted and never answered: its login never completes.
// After Heal the bytes held during a stall go through, as TCP's
// retransmissions would deliver them. It is for tests only: no production
// code imports it (the repository's dependency test checks that).
package pgproxy

import (
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Proxy forwards connections from its own address to an upstream one.
type Proxy struct {
	ln       net.Listener
	upstream string

	mu     sync.Mutex
	healed chan struct{} // closed while the link works; replaced by Stall
	delay  time.Duration
	cut    bool // the next answer is lost: see CutNextAnswer
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start proxies a free port of 127.0.0.1 to the server of rawURL, a
// postgres:// URL, until the test ends, and returns the proxy and rawURL
// pointed at it.
func Start(t testing.TB, rawURL string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		t.Fatalf("pgproxy: %q is not a postgres://host:port URL", rawURL)
	}
	upstream := u.Host
	if u.Port() == "" {
		upstream = net.JoinHostPort(u.Hostname(), "5432")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	healed := make(chan struct{})
	close(healed)
	p := &Proxy{ln: ln, upstream: upstream, healed: healed, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Stall holds every byte in both directions, on every connection, old and
// new, until Heal.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
		p.healed = make(chan struct{})
	default: // stalled already
	}
}

// Delay holds every chunk of bytes for d before passing it on, from now
// until Heal.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// CutNextAnswer loses the next answer the server sends: the connection it
// was for is closed instead, on both sides, as a crash of the link after
// the request went through would. The server has run whatever it answered.
func (p *Proxy) CutNextAnswer() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
}

// cutting reports whether the answer at hand is the one to lose, and
// disarms the cut.
func (p *Proxy) cutting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	cut := p.cut
	p.cut = false
	return cut
}

// Heal ends a stall or a delay: the bytes held go through.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = 0
	select {
	case <-p.healed:
	default:
		close(p.healed)
	}
}

// Reset closes every connection open now, on both sides, with a TCP reset:
// both ends see "connection reset by peer". New connections are proxied.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		if tcp, ok := c.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
		}
		_ = c.Close()
		delete(p.conns, c)
	}
}

// Conns is how many connections, counting both sides, are open now.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func (p *Proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Heal()
	p.Reset()
	p.wg.Wait()
}

// track adds c to the open connections, or closes it when the proxy is
// closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	_ = c.Close()
}

// gate waits until bytes may pass, and returns the delay to add.
func (p *Proxy) gate() time.Duration {
	p.mu.Lock()
	healed := p.healed
	p.mu.Unlock()
	<-healed
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(client) {
			return
		}
		p.wg.Go(func() { p.serve(client) })
	}
}

// serve proxies one client connection. The upstream is dialed once the link
// works: during a stall the client's connection is accepted by the kernel
// and then hears nothing.
func (p *Proxy) serve(client net.Conn) {
	defer p.untrack(client)
	p.gate()
	server, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn, answers bool) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if d := p.gate(); d > 0 {
					time.Sleep(d)
				}
				if answers && p.cutting() {
					return // serve closes both sides
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go pipe(server, client, false)
	go pipe(client, server, true)
	<-done // one side ended: end the other
	p.untrack(client)
	p.untrack(server)
	<-done
}
