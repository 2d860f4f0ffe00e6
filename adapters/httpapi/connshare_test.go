//go:build linux

package httpapi

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The limit's share for each client address, the place of connections that
// send no request, and what stops counting: on a served listener, with the
// clients on addresses of their own (127.0.0.1 and 127.0.0.2).

// dialAs opens a raw connection to s from the address from, closed when the
// test ends.
func (s *testServer) dialAs(t *testing.T, from *net.TCPAddr) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: from}
	conn, err := d.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// exchangeOn writes raw on conn and reads one answer, within closeBound.
func exchangeOn(t *testing.T, conn net.Conn, r *bufio.Reader, raw string) exchange {
	t.Helper()
	_, err := io.WriteString(conn, raw)
	require.NoError(t, err)
	_ = conn.SetReadDeadline(time.Now().Add(closeBound))
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	return exchange{resp: resp, body: body, conn: conn, r: r}
}

// At its share, a client's new connection takes the place of its own
// connection idle the longest, never of another client's, though another
// client's has been idle longer.
func TestAtItsShareAClientGivesWayToItself(t *testing.T) {
	s := startServer(t, withMaxConns(8), withClientShare(2))
	read := readPlant("Bearer " + s.token(t, nil))
	other := s.dialAs(t, goodAddr)
	otherR := bufio.NewReader(other)
	s.checkAPI(t, exchangeOn(t, other, otherR, read), http.MethodGet, "/plants/1")
	awaitIdle(t, s, 1)
	var own []exchange
	for i := range 2 {
		conn := s.dialAs(t, attackerAddr)
		own = append(own, exchangeOn(t, conn, bufio.NewReader(conn), read))
		awaitIdle(t, s, 2+i)
	}

	third := s.dialAs(t, attackerAddr)
	e := exchangeOn(t, third, bufio.NewReader(third), read)
	s.checkAPI(t, e, http.MethodGet, "/plants/1")
	if e.resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a third connection at the client's share answered %d %s, want the plant's 404", e.resp.StatusCode, e.body)
	}
	own[0].expectClosed(t)
	for name, c := range map[string]exchange{"the other client's": {conn: other, r: otherR}, "the client's newer": own[1]} {
		if e := exchangeOn(t, c.conn, c.r, read); e.resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s connection answered %d, want it open and served", name, e.resp.StatusCode)
		}
	}
	if n := shed(t, s.metrics, "closed_idle"); n != 1 {
		t.Errorf("closed_idle counted %v, want 1", n)
	}
}

// At its share with every connection in a request, a client's new one is
// refused 503 50301 naming the share, while another client is served.
func TestAtItsShareWithNoneToGiveWayAClientIsRefused(t *testing.T) {
	s := startServer(t, withMaxConns(8), withClientShare(1))
	holdBusy(t, s.conns, strings.TrimPrefix(s.url, "http://"), 1)

	refused := s.dialAs(t, attackerAddr)
	e := exchangeOn(t, refused, bufio.NewReader(refused), readPlant("Bearer "+s.token(t, nil)))
	s.checkAPI(t, e, http.MethodGet, "/plants/1")
	if e.resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(e.body), atClientShare) || e.resp.Header.Get("Retry-After") == "" {
		t.Fatalf("got %d %s; want 503 50301 %q with Retry-After", e.resp.StatusCode, e.body, atClientShare)
	}
	e.expectClosed(t)

	served := s.dialAs(t, goodAddr)
	if e := exchangeOn(t, served, bufio.NewReader(served), readPlant("Bearer "+s.token(t, nil))); e.resp.StatusCode != http.StatusNotFound {
		t.Fatalf("another client answered %d %s, want the plant's 404", e.resp.StatusCode, e.body)
	}
	if n := shed(t, s.metrics, "refused_client"); n != 1 {
		t.Errorf("refused_client counted %v, want 1", n)
	}
}

// A client with its part of the refusals in progress has its next
// connection beyond its share closed at once, unanswered, so that the
// listener goes on accepting for the others.
func TestAClientWithItsRefusalsInProgressIsClosedUnanswered(t *testing.T) {
	s := startServer(t, withMaxConns(8), withClientShare(1))
	holdBusy(t, s.conns, strings.TrimPrefix(s.url, "http://"), 1)
	attacker := clientOf(attackerAddr)
	for range s.conns.clientRefusals {
		s.conns.refusalBegins(attacker)
	}

	dropped := s.dialAs(t, attackerAddr)
	if rest := readUntilClosed(t, dropped, nil); len(rest) != 0 {
		t.Fatalf("a connection beyond the client's refusals got %.100q, want a close", rest)
	}
	served := s.dialAs(t, goodAddr)
	if e := exchangeOn(t, served, bufio.NewReader(served), readPlant("Bearer "+s.token(t, nil))); e.resp.StatusCode != http.StatusNotFound {
		t.Fatalf("another client answered %d %s, want the plant's 404", e.resp.StatusCode, e.body)
	}
	if n := shed(t, s.metrics, "dropped"); n != 1 {
		t.Errorf("dropped counted %v, want 1", n)
	}
}

// At the cap, a connection that has sent no request for waitingGrace gives
// way to a new one, the one that waited the longest first; one that sent
// its request does not.
func TestAtTheCapAConnectionThatSentNoRequestGivesWay(t *testing.T) {
	s := startServer(t, withMaxConns(3))
	oldest := s.dial(t)
	require.Eventually(t, func() bool { return s.conns.openCount() == 1 }, closeBound, time.Millisecond)
	s.dial(t)
	require.Eventually(t, func() bool { return s.conns.openCount() == 2 }, closeBound, time.Millisecond)
	holdBusy(t, s.conns, strings.TrimPrefix(s.url, "http://"), 1)

	require.Eventually(t, func() bool {
		e, err := s.tryExchange(readPlant("Bearer " + s.token(t, nil)))
		if e.conn != nil {
			defer e.conn.Close()
		}
		return err == nil && e.resp.StatusCode == http.StatusNotFound
	}, closeBound, 10*time.Millisecond, "a new client is never served beside the silent ones")
	if rest := readUntilClosed(t, oldest, nil); len(rest) != 0 {
		t.Fatalf("the silent connection closed to make room got %.100q", rest)
	}
	// The new client's connection closed as the test read its answer;
	// the other silent one and the busy one are still counted.
	require.Eventually(t, func() bool { return s.conns.openCount() == 2 }, closeBound, time.Millisecond,
		"%d connections open, want the newer silent one and the busy one", s.conns.openCount())
	if n := shed(t, s.metrics, "closed_no_request"); n != 1 {
		t.Errorf("closed_no_request counted %v, want 1", n)
	}
}

// A connection whose last answer is out stops counting at once, though
// net/http keeps it half a second more so that its client reads the answer
// rather than a reset: a header flood answered 400 leaves the one place of
// the cap to the next client, while its client still holds its socket.
func TestAnAnsweredConnectionStopsCountingAtOnce(t *testing.T) {
	s := startServer(t, withMaxConns(1), withLimits(ServerLimits{MaxHeaderBytes: 1 << 10}))
	flood := s.dial(t)
	r := bufio.NewReader(flood)
	e := exchangeOn(t, flood, r, "GET /plants/1 HTTP/1.1\r\nHost: x\r\nX-Flood: "+strings.Repeat("f", 16<<10)+"\r\n\r\n")
	if e.resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a header over the limit answered %d %s, want 400", e.resp.StatusCode, e.body)
	}
	// The server shuts its side once the answer is out: from there the
	// connection no longer counts, whenever net/http closes it.
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("after the answer: %v, want the server's end of the stream", err)
	}
	if n := s.conns.openCount(); n != 0 {
		t.Fatalf("%d connections counted after the answer, want 0", n)
	}
	next := s.dial(t)
	if e := exchangeOn(t, next, bufio.NewReader(next), readPlant("Bearer "+s.token(t, nil))); e.resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the next client answered %d %s, want the plant's 404", e.resp.StatusCode, e.body)
	}
}

// A connection that sends no whole request head within the read header
// timeout is closed and counted.
func TestAConnectionThatSendsNoHeadInTimeIsClosedAndCounted(t *testing.T) {
	s := startServer(t, withLimits(ServerLimits{ReadHeaderTimeout: 100 * time.Millisecond}))
	for _, sent := range []string{"", "GET /plants/1 HTTP/1.1\r\nHost: x\r\nX-Slow: a"} {
		conn := s.dial(t)
		_, err := io.WriteString(conn, sent)
		require.NoError(t, err)
		readUntilClosed(t, conn, nil)
	}
	require.Eventually(t, func() bool { return shed(t, s.metrics, "head_timeout") == 2 }, closeBound, time.Millisecond,
		"head_timeout counted %v, want 2", shed(t, s.metrics, "head_timeout"))
	// net/http tells the limit of a close after it closed the socket.
	require.Eventually(t, func() bool { return s.conns.openCount() == 0 }, closeBound, time.Millisecond,
		"%d connections counted after they were closed", s.conns.openCount())
}
