package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// trickle writes s to conn one byte every 200 ms, then keeps sending
// padding, until the connection fails or stop is closed: a slow client.
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

// readAnswer reads one response from r, the whole of what conn got, and
// checks it against the OpenAPI document as an answer to method path.
func (s *testServer) readAnswer(t *testing.T, r io.Reader, method, path string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(r), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("answer cut off: %v", err)
	}
	s.checkAPI(t, exchange{resp: resp, body: b}, method, path)
	return resp, b
}

// TestServerLimits shows that the server's timeouts and header limit end
// connections that hostile clients would otherwise hold: slow headers, slow
// bodies, idle keep-alive connections and oversized headers; and that a
// refused request is answered without waiting for its body.
func TestServerLimits(t *testing.T) {
	s := startServer(t, withLimits(ServerLimits{
		ReadHeaderTimeout: time.Second,
		ReadTimeout:       2 * time.Second,
		IdleTimeout:       time.Second,
		MaxHeaderBytes:    4096,
	}))
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
		if got := readUntilClosed(t, conn, nil); len(got) > 0 {
			resp, b := s.readAnswer(t, bytes.NewReader(got), "POST", "/plants")
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
		// Headers under the limit reach the API.
		e = s.rawExchange(t, "GET /nope HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 3<<10)+"\r\n\r\n")
		s.checkAPI(t, e, "GET", "/nope")
		if e.resp.StatusCode != 404 {
			t.Fatalf("got %d %s, want the API's 404", e.resp.StatusCode, e.body)
		}
	})

	t.Run("a refused request is answered at once, its unsent body never awaited", func(t *testing.T) {
		t.Parallel()
		// The refusal closes the connection instead of letting net/http
		// drain the unread body first, so the answer comes without it,
		// whatever length the body announced.
		for _, length := range []int{1000, 1000000} {
			id := "refused-unsent-body-" + strconv.Itoa(length)
			conn := s.dial(t)
			if _, err := fmt.Fprintf(conn, "POST /plants HTTP/1.1\r\nHost: x\r\nX-Request-ID: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", id, length); err != nil {
				t.Fatal(err)
			}
			got := readUntilClosed(t, conn, nil)
			if resp, b := s.readAnswer(t, bytes.NewReader(got), "POST", "/plants"); resp.StatusCode != 401 {
				t.Fatalf("got %d %s, want 401", resp.StatusCode, b)
			}
			// The API then waits a moment for the body it drops; the
			// request's logged duration ends with the answer, not with that
			// wait.
			var line struct{ Duration float64 }
			if l := s.accessLine(t, id); json.Unmarshal([]byte(l), &line) != nil {
				t.Fatalf("access line is not JSON: %q", l)
			}
			if d := time.Duration(line.Duration); d >= 400*time.Millisecond {
				t.Fatalf("access line duration %v counts the wait for the dropped body", d)
			}
		}
	})

	t.Run("a client still sending a refused body gets the answer, not a reset", func(t *testing.T) {
		t.Parallel()
		// The body follows the refusal, in two parts, as a client that
		// writes its whole request before reading would send it. Had the
		// API closed at once, the first part would meet a closed socket and
		// the second a reset connection, which drops the rest of the answer.
		for range 5 {
			conn := s.dial(t)
			part := strings.Repeat(" ", 16<<10)
			if _, err := fmt.Fprintf(conn, "POST /plants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 2*len(part)); err != nil {
				t.Fatal(err)
			}
			// The first byte of the answer is the sign that the refusal is
			// out; the body follows it.
			_ = conn.SetReadDeadline(time.Now().Add(closeBound))
			first := make([]byte, 1)
			if _, err := io.ReadFull(conn, first); err != nil {
				t.Fatalf("no answer: %v", err)
			}
			for range 2 {
				if _, err := io.WriteString(conn, part); err != nil {
					t.Fatalf("writing the body: %v", err)
				}
			}
			if resp, b := s.readAnswer(t, io.MultiReader(bytes.NewReader(first), conn), "POST", "/plants"); resp.StatusCode != 401 {
				t.Fatalf("got %d %s, want 401", resp.StatusCode, b)
			}
			conn.Close()
		}
	})
}
