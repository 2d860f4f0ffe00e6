package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// The connection limit, through the real router on a served listener: what
// a client sees at the cap, and what the cap bounds.

// readPlant is a keep-alive read of plant 1 with the Authorization header
// authorization.
func readPlant(authorization string) string {
	return "GET /plants/1 HTTP/1.1\r\nHost: plantstore\r\nAuthorization: " + authorization + "\r\n\r\n"
}

// slowCreate is the start of a create of plant id named name, the headers
// and a first part of the body, and the rest of its body: until the rest is
// sent, the create holds its handler.
func slowCreate(authorization string, id int, name string) (start, rest string) {
	first, rest := fmt.Sprintf(`{"id":%d,`, id), fmt.Sprintf(`"name":%q}`, name)
	return fmt.Sprintf("POST /plants HTTP/1.1\r\nHost: plantstore\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		authorization, len(first)+len(rest), first), rest
}

// idleCount is how many connections the limit holds idle.
func (l *ConnLimit) idleCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.idle.n
}

// awaitIdle waits, within a bound, until the limit holds n connections idle:
// net/http marks a connection idle after its answer is out, so the client
// may read the answer first.
func awaitIdle(t *testing.T, s *testServer, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.conns.idleCount() == n }, closeBound, time.Millisecond,
		"idle connections: %d, want %d", s.conns.idleCount(), n)
}

// shed is the count of plantstore_http_connections_shed_total for action.
func shed(t *testing.T, reg *prometheus.Registry, action string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "plantstore_http_connections_shed_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == action {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// At the cap, a new client is served: the connection idle the longest is
// closed to make room, and the others stay open and keep serving.
func TestAtTheConnectionLimitTheLongestIdleConnectionMakesRoom(t *testing.T) {
	const max = 4
	s := startServer(t, withMaxConns(max))
	read := readPlant("Bearer " + s.token(t, nil))
	idle := make([]exchange, max)
	for i := range idle {
		idle[i] = s.rawExchange(t, read)
		s.checkAPI(t, idle[i], http.MethodGet, "/plants/1")
		// One at a time, so that the first is the one idle the longest.
		awaitIdle(t, s, i+1)
	}

	s.call(t, http.MethodGet, "/plants/1").expectError(t, 404, "40402")
	idle[0].expectClosed(t)
	for i, e := range idle[1:] {
		if _, err := io.WriteString(e.conn, read); err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		resp, err := http.ReadResponse(e.r, nil)
		if err != nil {
			t.Fatalf("connection %d, idle for less long, was closed too: %v", i+1, err)
		}
		body, _ := io.ReadAll(resp.Body)
		s.checkAPI(t, exchange{resp: resp, body: body}, http.MethodGet, "/plants/1")
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("connection %d answered %d %s", i+1, resp.StatusCode, body)
		}
	}
	if n := shed(t, s.metrics, "closed_idle"); n != 1 {
		t.Errorf("closed_idle counted %v, want 1", n)
	}
	if !strings.Contains(s.logs.String(), `"msg":"closed an idle connection at the connection limit"`) {
		t.Errorf("the closing is not logged:\n%s", s.logs.String())
	}
}

// At the cap with every connection busy, a new one is answered at once,
// while the others are still being served: 503 with the Error body 50301,
// Retry-After and a request id, and closed, its request unread.
func TestAtTheConnectionLimitWithNoneIdleANewConnectionIsAnswered503(t *testing.T) {
	const max = 3
	s := startServer(t, withMaxConns(max))
	authorization := "Bearer " + s.token(t, nil)
	busy := make([]net.Conn, max)
	var rest string
	for i := range busy {
		busy[i] = s.dial(t)
		var start string
		start, rest = slowCreate(authorization, 10+i, "busy")
		_, err := io.WriteString(busy[i], start)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return s.conns.openCount() == max }, closeBound, time.Millisecond)

	e := s.rawExchange(t, readPlant(authorization))
	s.checkAPI(t, e, http.MethodGet, "/plants/1")
	var body struct {
		Error   int32  `json:"error"`
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal(e.body, &body))
	if e.resp.StatusCode != 503 || body.Error != 50301 || body.Message != atConnLimit || e.resp.Header.Get("Retry-After") != "1" ||
		!e.resp.Close || e.resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %v %s; want 503 50301, Retry-After: 1, closed", e.resp.StatusCode, e.resp.Header, e.body)
	}
	e.expectClosed(t)
	if line := s.accessLine(t, e.resp.Header.Get("X-Request-ID")); !strings.Contains(line, `"route":"connection_limit"`) || !strings.Contains(line, `"status":503`) {
		t.Errorf("access line %s", line)
	}

	for i, c := range busy {
		_, err := io.WriteString(c, rest)
		require.NoError(t, err)
		_ = c.SetReadDeadline(time.Now().Add(closeBound))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, "busy connection %d", i)
		b, _ := io.ReadAll(resp.Body)
		req, _ := http.NewRequest(http.MethodPost, s.url+"/plants", nil)
		s.contract.Check(t, req, resp, b)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("busy connection %d answered %d %s", i, resp.StatusCode, b)
		}
	}
	if n := shed(t, s.metrics, "refused"); n != 1 {
		t.Errorf("refused counted %v, want 1", n)
	}
}

// Refusing is bounded: with the most refusals in progress, a connection
// beyond the cap is closed at once, unanswered, and counted.
func TestRefusalsBeyondTheirBoundAreClosedUnanswered(t *testing.T) {
	s := startServer(t, withMaxConns(1))
	s.dial(t) // holds the one place, sending nothing
	require.Eventually(t, func() bool { return s.conns.openCount() == 1 }, closeBound, time.Millisecond)
	for range refusalsInFlight {
		s.conns.refusing <- struct{}{}
	}
	dropped := s.dial(t)
	_, _ = io.WriteString(dropped, readPlant("Bearer "+s.token(t, nil)))
	if rest := readUntilClosed(t, dropped, nil); len(rest) != 0 {
		t.Fatalf("a connection beyond the refusals' bound was answered %.100q", rest)
	}
	if n := shed(t, s.metrics, "dropped"); n != 1 {
		t.Errorf("dropped counted %v, want 1", n)
	}

	for range refusalsInFlight {
		<-s.conns.refusing
	}
	e := s.rawExchange(t, readPlant("Bearer "+s.token(t, nil)))
	s.checkAPI(t, e, http.MethodGet, "/plants/1")
	if e.resp.StatusCode != 503 {
		t.Fatalf("with room for refusals again: %d %s, want 503", e.resp.StatusCode, e.body)
	}
}

// Drain and a graceful shutdown work under the limit as without it: a
// drained answer closes its connection, which the limit stops counting; a
// shutdown closes the idle connections, lets the busy one finish, and leaves
// nothing counted.
func TestTheLimitFollowsDrainAndShutdown(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	api := newTestAPI(t, seededStore(t), 0)
	srv := NewServer(api, ServerLimits{}, log)
	conns := api.ConnLimit(8)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(conns.Limit(srv, api.Listener(ln))) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()
	c := contract(t)
	exchangeOn := func(conn net.Conn, r *bufio.Reader, method, path, raw string) *http.Response {
		t.Helper()
		_, err := io.WriteString(conn, raw)
		require.NoError(t, err)
		_ = conn.SetReadDeadline(time.Now().Add(closeBound))
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		req, _ := http.NewRequest(method, "http://"+addr+path, nil)
		c.Check(t, req, resp, b)
		return resp
	}
	dial := func() (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		return conn, bufio.NewReader(conn)
	}
	read := readPlant(bearer(t))

	idle, idleR := dial()
	exchangeOn(idle, idleR, http.MethodGet, "/plants/1", read)
	api.Drain()
	drained, drainedR := dial()
	if resp := exchangeOn(drained, drainedR, http.MethodGet, "/plants/1", read); !resp.Close {
		t.Fatalf("a drained answer without Connection: close: %v", resp.Header)
	}
	readUntilClosed(t, drained, drainedR)
	require.Eventually(t, func() bool { return conns.openCount() == 1 && conns.idleCount() == 1 }, closeBound, time.Millisecond,
		"open %d, idle %d; want only the connection idle before the drain", conns.openCount(), conns.idleCount())

	busy, busyR := dial()
	start, rest := slowCreate(bearer(t), 77, "late")
	_, err = io.WriteString(busy, start)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return conns.openCount() == 2 && api.InFlight() == 1 }, closeBound, time.Millisecond)
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Shutdown(context.Background()) }()
	readUntilClosed(t, idle, idleR)
	resp := exchangeOn(busy, busyR, http.MethodPost, "/plants", rest)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the request in flight at shutdown answered %d", resp.StatusCode)
	}
	require.NoError(t, <-stopped)
	require.ErrorIs(t, <-served, http.ErrServerClosed)
	// net/http lets Shutdown return before it tells the limit of the last
	// close.
	require.Eventually(t, func() bool { return conns.openCount() == 0 }, closeBound, time.Millisecond,
		"after shutdown the limit counts %d open", conns.openCount())
}
