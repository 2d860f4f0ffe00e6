package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

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

// trickle writes s to conn one byte every 200 ms, then keeps sending
// padding, until the connection fails or stop is closed.
func trickle(conn net.Conn, s string, stop <-chan struct{}) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		b := byte('a')
		if i < len(s) {
			b = s[i]
		}
		if _, err := conn.Write([]byte{b}); err != nil {
			return
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

func (s *service) dial(t *testing.T) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.api, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestServerLimits shows that the server's timeouts and header limit end
// connections that hostile clients would otherwise hold: slow headers, slow
// bodies, idle keep-alive connections and oversized headers.
func TestServerLimits(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), map[string]string{
		"PLANTSTORE_READ_HEADER_TIMEOUT": "1s",
		"PLANTSTORE_READ_TIMEOUT":        "2s",
		"PLANTSTORE_IDLE_TIMEOUT":        "1s",
		"PLANTSTORE_MAX_HEADER_BYTES":    "4096",
	})
	good := s.token(t, nil)

	t.Run("slow headers end at the read-header timeout", func(t *testing.T) {
		t.Parallel()
		conn := s.dial(t)
		stop := make(chan struct{})
		defer close(stop)
		go trickle(conn, "POST /plants HTTP/1.1\r\nHost: x\r\nX-Slow: ", stop)
		// net/http ends the connection, at most with its plain-text 400.
		if got := readUntilClosed(t, conn, nil); len(got) != 0 && !bytes.HasPrefix(got, []byte("HTTP/1.1 400 Bad Request\r\n")) {
			t.Fatalf("a slow client was answered %.100q", got)
		}
	})

	t.Run("slow body ends at the read timeout", func(t *testing.T) {
		t.Parallel()
		conn := s.dial(t)
		head := "POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + good +
			"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		defer close(stop)
		go trickle(conn, `{"id":1,"name":"`, stop)
		// The body cannot be read to its end: when the answer gets out before
		// the connection ends, it is the malformed-body Error.
		got := readUntilClosed(t, conn, nil)
		if len(got) > 0 {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(got)), nil)
			if err != nil {
				t.Fatalf("not an HTTP response: %.100q", got)
			}
			b, _ := io.ReadAll(resp.Body)
			s.checkAPI(t, exchange{resp: resp, body: b}, "POST", "/plants")
			if resp.StatusCode != 400 || !strings.HasPrefix(string(b), `{"error":40001,`) {
				t.Fatalf("got %d %s, want 400 40001", resp.StatusCode, b)
			}
		}
	})

	t.Run("idle keep-alive connections end at the idle timeout", func(t *testing.T) {
		t.Parallel()
		e := s.rawExchange(t, "GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n")
		s.checkAPI(t, e, "GET", "/openapi.yaml")
		if e.resp.StatusCode != 200 || e.resp.Close {
			t.Fatalf("got %d (close %v), want 200 on a kept connection", e.resp.StatusCode, e.resp.Close)
		}
		if rest := readUntilClosed(t, e.conn, e.r); len(rest) != 0 {
			t.Fatalf("an idle connection was sent %.100q", rest)
		}
	})

	t.Run("headers over the limit are refused", func(t *testing.T) {
		t.Parallel()
		e := s.rawExchange(t, "GET /nope HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 10<<10)+"\r\n\r\n")
		s.contract.CheckRefused(t, e.resp, e.body)
		if !strings.Contains(string(e.body), `"message":"headers: larger than the limit"`) {
			t.Fatalf("got %d %q, want the header limit named", e.resp.StatusCode, e.body)
		}
		readUntilClosed(t, e.conn, e.r)
		// Headers under the limit reach the service.
		e = s.rawExchange(t, "GET /nope HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 3<<10)+"\r\n\r\n")
		s.checkAPI(t, e, "GET", "/nope")
		if e.resp.StatusCode != 404 {
			t.Fatalf("got %d %s, want the service's 404", e.resp.StatusCode, e.body)
		}
	})

	t.Run("a refused request is answered at once, its unsent body never awaited", func(t *testing.T) {
		t.Parallel()
		// The refusal closes the connection instead of letting net/http
		// drain the unread body first, so the answer comes without it.
		conn := s.dial(t)
		if _, err := io.WriteString(conn, "POST /plants HTTP/1.1\r\nHost: x\r\nX-Request-ID: refused-unsent-body\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		got := readUntilClosed(t, conn, nil)
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(got)), nil)
		if err != nil {
			t.Fatalf("no answer before the connection ended: %.100q", got)
		}
		b, _ := io.ReadAll(resp.Body)
		s.checkAPI(t, exchange{resp: resp, body: b}, "POST", "/plants")
		if resp.StatusCode != 401 {
			t.Fatalf("got %d %s, want 401", resp.StatusCode, b)
		}
		// The service then waits a moment for the body it drops; the
		// request's logged duration ends with the answer, not with that wait.
		for _, l := range strings.Split(s.logs.String(), "\n") {
			if !strings.Contains(l, `"request_id":"refused-unsent-body"`) {
				continue
			}
			var line struct{ Duration float64 }
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("access line is not JSON: %q", l)
			}
			if d := time.Duration(line.Duration); d >= 400*time.Millisecond {
				t.Fatalf("access line duration %v counts the wait for the dropped body", d)
			}
			return
		}
		t.Fatalf("no access line for the refused request in:\n%s", s.logs.String())
	})

	t.Run("a client still sending a refused body gets the answer, not a reset", func(t *testing.T) {
		t.Parallel()
		// The body follows the refusal, in two parts, as a client that
		// writes its whole request before reading would send it. Had the
		// service closed at once, the first part would meet a closed socket
		// and the second a reset connection.
		for range 5 {
			conn := s.dial(t)
			part := strings.Repeat(" ", 16<<10)
			if _, err := fmt.Fprintf(conn, "POST /plants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 2*len(part)); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				time.Sleep(30 * time.Millisecond)
				if _, err := io.WriteString(conn, part); err != nil {
					t.Fatalf("writing the body: %v", err)
				}
			}
			_ = conn.SetReadDeadline(time.Now().Add(closeBound))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("answer cut off: %v", err)
			}
			s.checkAPI(t, exchange{resp: resp, body: b}, "POST", "/plants")
			if resp.StatusCode != 401 {
				t.Fatalf("got %d %s, want 401", resp.StatusCode, b)
			}
			conn.Close()
		}
	})
}
