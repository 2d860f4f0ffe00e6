package httpapi

import (
	"strconv"
	"strings"
	"testing"
)

// TestMalformedFramingOverRawConnections sends what a well-behaved client
// cannot: broken chunked encodings, conflicting lengths, control characters
// in headers and paths. Framing the API reads itself is answered with
// an Error body, and so is what net/http refuses before the API sees the
// request (docs/security.md); in both cases the connection is closed.
func TestMalformedFramingOverRawConnections(t *testing.T) {
	s := startServer(t)
	good := s.token(t, nil)
	post := "POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + good + "\r\nContent-Type: application/json\r\n"
	chunked := post + "Transfer-Encoding: chunked\r\n\r\n"
	plant := `{"id":1,"name":"a"}` // 19 bytes, 0x13

	t.Run("broken chunked bodies are malformed bodies", func(t *testing.T) {
		for name, raw := range map[string]string{
			"bad chunk size":          chunked + "zz\r\n" + plant + "\r\n0\r\n\r\n",
			"chunk size overflow":     chunked + "fffffffffffffffffffff\r\n" + plant + "\r\n0\r\n\r\n",
			"negative chunk size":     chunked + "-13\r\n" + plant + "\r\n0\r\n\r\n",
			"missing CRLF after data": chunked + "13\r\n" + plant + "XX0\r\n\r\n",
			"chunk shorter than sent": chunked + "3\r\n" + plant + "\r\n0\r\n\r\n",
			"bare LF line endings":    chunked + "13\n" + plant + "\n0\n\n",
		} {
			e := s.rawExchange(t, raw)
			s.checkAPI(t, e, "POST", "/plants")
			if e.resp.StatusCode != 400 || !strings.HasPrefix(string(e.body), `{"error":40001,`) {
				t.Errorf("%s: got %d %s, want 400 40001", name, e.resp.StatusCode, e.body)
				continue
			}
			e.expectClosed(t)
		}
	})

	t.Run("chunk extensions are ignored", func(t *testing.T) {
		e := s.rawExchange(t, chunked+"13;name=value;\x01garbage=\"\r\n"+plant+"\r\n0\r\n\r\n")
		s.checkAPI(t, e, "POST", "/plants")
		if e.resp.StatusCode != 200 {
			t.Errorf("got %d %s", e.resp.StatusCode, e.body)
		}
	})

	t.Run("chunked wins over Content-Length", func(t *testing.T) {
		// The declared length would cut the body after `{"id":`; the chunked
		// framing, which carries the whole plant, is the one that counts.
		e := s.rawExchange(t, post+"Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n13\r\n"+`{"id":2,"name":"b"}`+"\r\n0\r\n\r\n")
		s.checkAPI(t, e, "POST", "/plants")
		if e.resp.StatusCode != 200 || string(e.body) != `{"name":"b"}` {
			t.Errorf("got %d %s", e.resp.StatusCode, e.body)
		}
	})

	t.Run("declared length over the limit", func(t *testing.T) {
		// The API reads nothing of a body it refuses by its declared
		// length: the answer comes at once and the connection is closed,
		// whatever the size (net/http would otherwise drain up to 256 KiB).
		for _, length := range []int{300000, 100000} {
			e := s.rawExchange(t, post+"Content-Length: "+strconv.Itoa(length)+"\r\n\r\n"+plant)
			s.checkAPI(t, e, "POST", "/plants")
			if e.resp.StatusCode != 413 || !strings.HasPrefix(string(e.body), `{"error":41301,`) {
				t.Errorf("Content-Length %d: got %d %s", length, e.resp.StatusCode, e.body)
			}
			if !e.resp.Close {
				t.Errorf("Content-Length %d: the refusal must close the connection", length)
			}
			e.expectClosed(t)
		}
	})

	t.Run("header injection through X-Request-ID", func(t *testing.T) {
		e := s.rawExchange(t, "GET /nope HTTP/1.1\r\nHost: x\r\nX-Request-ID: abc\r\nSet-Cookie: evil=1\r\nX-Injected: 1\r\n\r\n")
		s.checkAPI(t, e, "GET", "/nope")
		if e.resp.Header.Get("X-Request-ID") != "abc" || e.resp.Header.Get("Set-Cookie") != "" || e.resp.Header.Get("X-Injected") != "" {
			t.Errorf("request headers leaked into the response: %v", e.resp.Header)
		}
		e = s.rawExchange(t, "GET /nope HTTP/1.1\r\nHost: x\r\nX-Request-ID: abc\r\n X-Injected: 1\r\n\r\n")
		s.checkAPI(t, e, "GET", "/nope")
		if got := e.resp.Header.Get("X-Request-ID"); got == "" || strings.Contains(got, "Injected") || e.resp.Header.Get("X-Injected") != "" {
			t.Errorf("a folded header line leaked into the response: %v", e.resp.Header)
		}
	})

	t.Run("what net/http refuses before the service is answered with an Error body", func(t *testing.T) {
		tests := []struct{ name, raw, message string }{
			{"conflicting Content-Length", post + "Content-Length: 19\r\nContent-Length: 20\r\n\r\n" + plant, "request: "},
			{"negative Content-Length", post + "Content-Length: -1\r\n\r\n" + plant, "request: "},
			{"Content-Length not a number", post + "Content-Length: 1e3\r\n\r\n" + plant, "request: "},
			{"CR inside X-Request-ID", "GET /nope HTTP/1.1\r\nHost: x\r\nX-Request-ID: a\rb\r\n\r\n", "request: "},
			{"NUL inside a header", "GET /nope HTTP/1.1\r\nHost: x\r\nX-Request-ID: a\x00b\r\n\r\n", "request: "},
			{"NUL in the path", "GET /a\x00b HTTP/1.1\r\nHost: x\r\n\r\n", "request: "},
			{"bad percent-encoding in the path", "GET /plants/%ZZ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + good + "\r\n\r\n", "request: "},
			{"space in a header name", "GET /nope HTTP/1.1\r\nHost: x\r\nX Bad: 1\r\n\r\n", "request: "},
			{"no Host", "GET /nope HTTP/1.1\r\n\r\n", "request: missing required Host header"},
			{"two Host headers", "GET /nope HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "request: "},
			{"request line garbage", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", "request: "},
			{"unknown transfer coding", post + "Transfer-Encoding: gzip\r\n\r\n", "Transfer-Encoding: "},
			{"two transfer codings", post + "Transfer-Encoding: gzip, chunked\r\n\r\n", "Transfer-Encoding: "},
			{"Transfer-Encoding twice", post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "Transfer-Encoding: "},
			{"unknown HTTP version", "GET /nope HTTP/9.9\r\nHost: x\r\n\r\n", "request: HTTP version"},
			{"unknown expectation", post + "Expect: the-unexpected\r\nContent-Length: 19\r\n\r\n" + plant, "Expect: "},
			{"unknown expectation in HTTP/1.0", strings.Replace(post, "HTTP/1.1", "HTTP/1.0", 1) + "Expect: the-unexpected\r\nContent-Length: 19\r\n\r\n" + plant, "Expect: "},
		}
		for _, tt := range tests {
			e := s.rawExchange(t, tt.raw)
			s.contract.CheckRefused(t, e.resp, e.body)
			if !strings.Contains(string(e.body), `"message":"`+tt.message) {
				t.Errorf("%s: got %q, want a message starting %q", tt.name, e.body, tt.message)
			}
			id := e.resp.Header.Get("X-Request-ID")
			if line := s.accessLine(t, id); !strings.Contains(line, `"route":"unparsed"`) || !strings.Contains(line, `"status":400`) {
				t.Errorf("%s: access line %s", tt.name, line)
			}
			e.expectClosed(t)
		}
	})

	t.Run("HTTP/2's connection preface is refused as another HTTP version", func(t *testing.T) {
		// net/http hands "PRI * HTTP/2.0" to the handler, for one that
		// speaks h2c; the service speaks HTTP/1.x only.
		e := s.rawExchange(t, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
		s.contract.CheckRefused(t, e.resp, e.body)
		want := `{"error":40002,"message":"request: HTTP version not supported; send HTTP/1.1"}`
		if e.resp.StatusCode != 400 || strings.TrimSpace(string(e.body)) != want || !e.resp.Close {
			t.Errorf("got %d %s (close %v), want 400 %s on a closing connection", e.resp.StatusCode, e.body, e.resp.Close, want)
		}
		// Logged and counted as the versions net/http refuses by itself.
		if line := s.accessLine(t, e.resp.Header.Get("X-Request-ID")); !strings.Contains(line, `"route":"unparsed"`) || !strings.Contains(line, `"error":"request: HTTP version`) {
			t.Errorf("access line %s", line)
		}
		e.expectClosed(t)
	})

	t.Run("OPTIONS * is answered by the service", func(t *testing.T) {
		e := s.rawExchange(t, "OPTIONS * HTTP/1.1\r\nHost: x\r\nX-Request-ID: server-options\r\n\r\n")
		if e.resp.StatusCode != 200 || len(e.body) != 0 || e.resp.Header.Get("X-Request-ID") != "server-options" {
			t.Errorf("got %d %q %v, want an empty 200 with the request id", e.resp.StatusCode, e.body, e.resp.Header)
		}
		if line := s.accessLine(t, "server-options"); !strings.Contains(line, `"method":"OPTIONS"`) {
			t.Errorf("access line %s", line)
		}
	})

	s.expectHealthy(t)
}
