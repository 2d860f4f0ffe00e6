package httpapi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Some tests write what a well-behaved client cannot, or hold a connection
// as a hostile one would, on raw connections to the served API.

// exchange is one request written to a fresh connection and the response
// read back from it.
type exchange struct {
	resp *http.Response
	body []byte
	conn net.Conn
	r    *bufio.Reader
}

// rawExchange writes raw to a new connection and reads one response. Waits
// are bounded so that a server that never answers fails the test instead of
// hanging it.
func (s *testServer) rawExchange(t *testing.T, raw string) exchange {
	t.Helper()
	e, err := s.tryExchange(raw)
	if e.conn != nil {
		t.Cleanup(func() { e.conn.Close() })
	}
	if err != nil {
		t.Fatalf("%.60q: %v", raw, err)
	}
	return e
}

// tryExchange is rawExchange that returns what went wrong. The connection
// it opened, if any, is the caller's to close.
func (s *testServer) tryExchange(raw string) (exchange, error) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		return exchange{}, err
	}
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		return exchange{conn: conn}, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return exchange{conn: conn}, fmt.Errorf("no response: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return exchange{conn: conn}, fmt.Errorf("reading the body: %w", err)
	}
	return exchange{resp: resp, body: b, conn: conn, r: br}, nil
}

// checkAPI validates an answer of the API against the OpenAPI document.
func (s *testServer) checkAPI(t *testing.T, e exchange, method, path string) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.contract.Check(t, req, e.resp, e.body)
}

// expectClosed waits, within a bound, for the server to close the connection.
func (e exchange) expectClosed(t *testing.T) {
	t.Helper()
	if rest := readUntilClosed(t, e.conn, e.r); len(rest) != 0 {
		t.Fatalf("more after a closing answer: %.100q", rest)
	}
}

// closeBound is how long a test waits for the server to end a connection
// that its timeouts should end within a second or two: a bound on a wait,
// so that a server that never ends it fails the test instead of hanging it.
const closeBound = 10 * time.Second

// readUntilClosed reads conn, through r when r buffers it, until the server
// ends it and returns what was read. It fails t when the connection is still
// open after closeBound.
func readUntilClosed(t *testing.T, conn net.Conn, r io.Reader) []byte {
	t.Helper()
	if r == nil {
		r = conn
	}
	_ = conn.SetReadDeadline(time.Now().Add(closeBound))
	var got bytes.Buffer
	_, err := io.Copy(&got, r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection was still open after %v; read %.100q", closeBound, got.Bytes())
	}
	return got.Bytes() // io.EOF (a clean close) or a reset both end the connection
}

// dial opens a raw connection to the API, closed when the test ends.
func (s *testServer) dial(t *testing.T) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
