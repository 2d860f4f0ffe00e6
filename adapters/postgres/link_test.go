package postgres

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// A socket dialed for no session is a cancel request's: lib/pq reads it
// until the server closes it. A server that accepts it and never answers
// holds that read for no longer than cancelTimeout, whatever deadline
// lib/pq sets on it.
func TestACancelRequestsSocketIsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept() // and never answer
		if err == nil {
			held <- c
		}
	}()
	defer func() {
		select {
		case c := <-held:
			c.Close()
		default:
		}
	}()
	start := time.Now()
	nc, err := dialer{}.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// What lib/pq does with a URL's connect_timeout: a later deadline.
	if err := nc.SetDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, nc); read <- err }()
	select {
	case err := <-read:
		if err == nil {
			t.Fatal("reading a cancel request's socket the server never answers ended without an error")
		}
	case <-time.After(cancelTimeout + time.Second):
		t.Fatalf("reading a cancel request's socket the server never answers still waits after %s; want a timeout within %s", time.Since(start).Round(time.Millisecond), cancelTimeout)
	}
}
