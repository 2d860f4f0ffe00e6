package otlptest

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Silent is a collector that accepts connections and reads what is sent
// but never answers: what a hung collector, or one behind a proxy that
// lost its upstream, looks like to an exporter. Build it with NewSilent.
type Silent struct {
	// URL is the OTLP base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it.
	URL string

	received chan struct{} // closed once the first bytes of an export arrived
	once     sync.Once
	mu       sync.Mutex
	conns    []net.Conn
	closed   bool
}

// NewSilent starts a silent collector, closed when the test ends.
func NewSilent(t testing.TB) *Silent {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("silent collector: %v", err)
	}
	s := &Silent{URL: "http://" + ln.Addr().String(), received: make(chan struct{})}
	go s.accept(ln)
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.closed = true
		for _, c := range s.conns {
			_ = c.Close()
		}
	})
	return s
}

func (s *Silent) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		go func() {
			// Read, so that the exporter's writes never block, and answer
			// nothing.
			if n, _ := io.CopyN(io.Discard, c, 1); n == 1 {
				s.once.Do(func() { close(s.received) })
			}
			_, _ = io.Copy(io.Discard, c)
		}()
	}
}

// WaitExport fails t unless an export has begun to arrive within d: the
// exporter is then waiting for an answer that never comes.
func (s *Silent) WaitExport(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case <-s.received:
	case <-time.After(d):
		t.Fatalf("no export reached the silent collector within %s", d)
	}
}
