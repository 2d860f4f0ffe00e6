package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// corpusDir holds the decoder's seed corpus: hostile request bodies.
const corpusDir = "../../adapters/httpapi/testdata/fuzz/FuzzDecodeNewPlant"

// loadCorpus reads every body of the decoder's seed corpus.
func loadCorpus(t *testing.T) [][]byte {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var bodies [][]byte
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(corpusDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(b), "\n", 3)
		if len(lines) < 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s is not a corpus file", e.Name())
		}
		body, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		bodies = append(bodies, []byte(body))
	}
	return bodies
}

// hostileSnippets are spliced into bodies by mutate.
var hostileSnippets = []string{
	`\u0000`, "\x00", "\xff", "\xc0\xaf", "\xed\xa0\x80", `\ud800`, "\xef\xbb\xbf", "\u00a0",
	"[", "]", "{", "}", `"`, `\`, ",", ":", "1e400", "-", "null", strings.Repeat("[", 100),
	`"id":1`, `"name":"x"`, `"tag":null`,
}

// mutate returns a copy of b changed in one to three places.
func mutate(rng *rand.Rand, b []byte) []byte {
	out := slices.Clone(b)
	for range 1 + rng.IntN(3) {
		at := 0
		if len(out) > 0 {
			at = rng.IntN(len(out))
		}
		switch rng.IntN(5) {
		case 0: // flip a byte
			if len(out) > 0 {
				out[at] = byte(rng.IntN(256))
			}
		case 1: // splice in a hostile snippet
			out = slices.Insert(out, at, []byte(hostileSnippets[rng.IntN(len(hostileSnippets))])...)
		case 2: // cut a piece out
			out = slices.Delete(out, at, min(len(out), at+1+rng.IntN(8)))
		case 3: // repeat a piece
			end := min(len(out), at+1+rng.IntN(16))
			out = slices.Insert(out, at, slices.Clone(out[at:end])...)
		case 4: // truncate
			out = out[:at]
		}
	}
	return out
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

// documentedCreateStatuses are the answers POST /plants may give (docs/errors.md).
var documentedCreateStatuses = []int{200, 400, 401, 403, 409, 413, 415}

// TestHostileRequestsGetDocumentedAnswers sends several hundred generated
// hostile requests: the decoder's seed corpus as it is and mutated, random
// bytes, odd content types, tokens, request ids, paths and methods. Every
// answer is one the OpenAPI document allows, none is a 5xx, and the service
// is healthy afterwards.
func TestHostileRequestsGetDocumentedAnswers(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), nil)
	const seed = 20240601
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("mutations seeded with %d", seed)

	good := s.token(t, nil)
	bearer := "Bearer " + good
	authorizations := []string{bearer, bearer, bearer, bearer, bearer, "", "Basic YTpi", "Bearer", "Bearer not.a.jwt",
		"Bearer " + s.token(t, jwt.MapClaims{"scope": "plants:read"}), bearer + "x", "bearer  " + good}
	contentTypes := []string{"application/json", "application/json", "application/json", "application/json; charset=utf-8",
		"text/plain", "", "application/json; charset=latin1", "application/json; foo=bar", "application/json;;", "*/*"}
	requestIDs := []string{"", "", "sane-id-1", strings.Repeat("x", 200), "a b", `"quoted"`, "ünïcode", "<script>"}

	answers := map[int]int{}
	send := func(method, path string, header map[string]string, body []byte) {
		t.Helper()
		r := s.do(t, method, path, header, body)
		answers[r.status]++
		if r.status >= 500 {
			t.Errorf("%s %s %.80q: %d %s", method, path, body, r.status, r.body)
		}
		if method == "POST" && path == "/plants" && !slices.Contains(documentedCreateStatuses, r.status) {
			t.Errorf("%.80q: undocumented %d %s", body, r.status, r.body)
		}
	}
	header := func() map[string]string {
		h := map[string]string{}
		if a := authorizations[rng.IntN(len(authorizations))]; a != "" {
			h["Authorization"] = a
		}
		if ct := contentTypes[rng.IntN(len(contentTypes))]; ct != "" {
			h["Content-Type"] = ct
		}
		if id := requestIDs[rng.IntN(len(requestIDs))]; id != "" {
			h["X-Request-ID"] = id
		}
		return h
	}

	for _, body := range loadCorpus(t) {
		send("POST", "/plants", map[string]string{"Authorization": bearer, "Content-Type": "application/json"}, body)
		send("POST", "/plants", header(), mutate(rng, body))
	}
	for range 100 {
		body := randomBytes(rng, rng.IntN(2048))
		if rng.IntN(2) == 0 {
			body = append([]byte(`{"id":`), body...)
		}
		send("POST", "/plants", header(), body)
	}
	paths := []string{"/plants/", "//plants", "/PLANTS", "/plants?id=1", "/plants%2F", "/plants;x=1", "/%2e%2e/plants",
		"/plants/../plants", "/openapi.yaml/", "/openapi.yaml?x=%00", "/a%00b", "/" + strings.Repeat("p", 8192), "/"}
	methods := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "FOO", "TRACE"}
	for range 60 {
		send(methods[rng.IntN(len(methods))], paths[rng.IntN(len(paths))], header(), []byte(`{"id":1,"name":"a"}`))
	}

	total := 0
	for _, n := range answers {
		total += n
	}
	t.Logf("%d hostile requests, answers by status: %v", total, answers)
	if total < 500 {
		t.Fatalf("only %d hostile requests were sent", total)
	}
	expectHealthy(t, s)
}

// expectHealthy checks that the service still serves and that nothing it
// logged was an error.
func expectHealthy(t *testing.T, s *service) {
	t.Helper()
	if r := s.adminGet(t, "/healthz"); r.status != 200 {
		t.Fatalf("healthz %d after hostile requests", r.status)
	}
	if r := s.adminGet(t, "/readyz"); r.status != 200 {
		t.Fatalf("readyz %d after hostile requests", r.status)
	}
	id := rand.Int64()
	s.create(t, fmt.Sprintf(`{"id":%d,"name":"still serving"}`, id)).expect(t, 200, `{"name":"still serving"}`)
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("the service logged an error: %s", line)
		}
	}
}

// sendRequest sends a prepared request and checks the response against the
// OpenAPI document, as service.do does for simple ones.
func (s *service) sendRequest(t *testing.T, req *http.Request) response {
	t.Helper()
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	s.contract.Check(t, req, resp, b)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (s *service) request(t *testing.T, method, path string, header http.Header, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, s.api+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	return req
}

// TestHostileHeaders covers odd and repeated headers, sizes at the limit,
// odd paths and methods, end to end.
func TestHostileHeaders(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), nil)
	good := s.token(t, nil)
	body := []byte(`{"id":1,"name":"a"}`)
	nextID := 100
	fresh := func() []byte { nextID++; return []byte(fmt.Sprintf(`{"id":%d,"name":"a"}`, nextID)) }

	t.Run("content types", func(t *testing.T) {
		tests := []struct {
			name   string
			values []string
			status int
		}{
			{"identical twice", []string{"application/json", "application/json"}, 415},
			{"conflicting", []string{"application/json", "text/plain"}, 415},
			{"bogus parameter", []string{"application/json; foo=bar"}, 200},
			{"quoted parameters", []string{`application/json; charset="utf-8"; q="a b"`}, 200},
			{"parameter without value", []string{"application/json; charset"}, 415},
			{"empty parameters", []string{"application/json;;"}, 415},
			{"charset twice", []string{"application/json; charset=utf-8; charset=utf-8"}, 200},
			{"conflicting charsets", []string{"application/json; charset=utf-8; charset=latin1"}, 415},
			{"list of types", []string{"application/json, text/plain"}, 415},
			{"suffix type", []string{"application/merge-patch+json"}, 415},
			{"non-ASCII", []string{"application/jsön"}, 415},
			{"empty", []string{""}, 415},
			{"huge parameter", []string{"application/json; x=" + strings.Repeat("y", 10000)}, 200},
		}
		for _, tt := range tests {
			h := http.Header{"Authorization": {"Bearer " + good}, "Content-Type": tt.values}
			r := s.sendRequest(t, s.request(t, "POST", "/plants", h, bytes.NewReader(fresh())))
			if r.status != tt.status {
				t.Errorf("%s: got %d %s, want %d", tt.name, r.status, r.body, tt.status)
			}
		}
	})

	t.Run("authorization", func(t *testing.T) {
		tests := []struct {
			name   string
			values []string
			status int
			code   string
		}{
			{"100 KB token", []string{"Bearer " + strings.Repeat("a", 100<<10)}, 401, "40102"},
			{"100 KB of other scheme", []string{"Basic " + strings.Repeat("a", 100<<10)}, 401, "40101"},
			{"several spaces", []string{"Bearer     " + good}, 200, ""},
			{"leading and trailing white space", []string{" \tBearer " + good + " \t"}, 200, ""},
			{"tab after the scheme", []string{"Bearer\t" + good}, 401, "40101"},
			{"non-ASCII bytes", []string{"Bearer \x80\xfe\xff" + good}, 401, "40102"},
			{"non-ASCII text", []string{"Bearer tökén"}, 401, "40102"},
			{"two tokens", []string{"Bearer " + good + " " + good}, 401, "40102"},
			{"scheme only", []string{"Bearer"}, 401, "40101"},
			{"glued scheme", []string{"Bearer" + good}, 401, "40101"},
			{"two headers", []string{"Bearer " + good, "Bearer " + good}, 401, "40102"},
			{"two headers, other scheme first", []string{"Basic YTpi", "Bearer " + good}, 401, "40102"},
			{"empty", []string{""}, 401, "40101"},
		}
		for _, tt := range tests {
			h := http.Header{"Authorization": tt.values, "Content-Type": {"application/json"}}
			r := s.sendRequest(t, s.request(t, "POST", "/plants", h, bytes.NewReader(fresh())))
			if tt.status == 200 {
				r.expect(t, 200, `{"name":"a"}`)
				continue
			}
			r.expectError(t, tt.status, tt.code)
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), `Bearer realm="plantstore"`) {
				t.Errorf("%s: WWW-Authenticate %q", tt.name, r.header.Get("WWW-Authenticate"))
			}
			if len(r.body) > 200 || len(r.header.Get("WWW-Authenticate")) > 200 {
				t.Errorf("%s: the refusal repeats the token: %d-byte body", tt.name, len(r.body))
			}
		}
	})

	t.Run("request ids", func(t *testing.T) {
		sane := strings.Repeat("aZ09-_.:/+=", 12)[:128]
		for _, id := range []string{sane, "x", "7f3c2a1e-8d7b-4e55-9a0b-3c1d2e3f4a5b"} {
			r := s.do(t, "POST", "/plants", map[string]string{"X-Request-ID": id}, body)
			if got := r.header.Get("X-Request-ID"); got != id {
				t.Errorf("sane id %q echoed as %q", id, got)
			}
		}
		for _, id := range []string{sane + "a", "", " ", "a b", "a\tb", `a"b`, "a'b", "a;b", "a,b", "ünïcode", "\x80\xff",
			"<script>alert(1)</script>", "${jndi:ldap://x}", "a%0d%0aSet-Cookie:x", strings.Repeat("x", 10000)} {
			h := http.Header{"X-Request-Id": {id}}
			r := s.sendRequest(t, s.request(t, "GET", "/nope", h, nil))
			if got := r.header.Get("X-Request-ID"); got == "" || got == id || strings.ContainsAny(got, " \t\"'<;,%") {
				t.Errorf("hostile id %.40q answered with id %.40q", id, got)
			}
		}
		h := http.Header{"X-Request-Id": {"first", "second"}}
		if got := s.sendRequest(t, s.request(t, "GET", "/nope", h, nil)).header.Values("X-Request-ID"); len(got) != 1 || got[0] == "second" {
			t.Errorf("two request ids answered with %q", got)
		}
	})

	t.Run("body at the limit", func(t *testing.T) {
		h := http.Header{"Authorization": {"Bearer " + good}, "Content-Type": {"application/json"}}
		exact := func() []byte {
			b := fresh()
			return append(b, bytes.Repeat([]byte(" "), 65536-len(b))...)
		}
		// Known length, then unknown length (sent chunked).
		s.sendRequest(t, s.request(t, "POST", "/plants", h, bytes.NewReader(exact()))).expect(t, 200, `{"name":"a"}`)
		s.sendRequest(t, s.request(t, "POST", "/plants", h, bytes.NewReader(append(exact(), ' ')))).expectError(t, 413, "41301")
		s.sendRequest(t, s.request(t, "POST", "/plants", h, io.MultiReader(bytes.NewReader(exact())))).expect(t, 200, `{"name":"a"}`)
		s.sendRequest(t, s.request(t, "POST", "/plants", h, io.MultiReader(bytes.NewReader(append(exact(), ' '))))).expectError(t, 413, "41301")
	})

	t.Run("paths and methods", func(t *testing.T) {
		h := map[string]string{"Authorization": "Bearer " + good, "Content-Type": "application/json"}
		for _, m := range []string{"PATCH", "PUT", "DELETE", "OPTIONS", "FOO"} {
			r := s.do(t, m, "/plants", h, body)
			r.expectError(t, 405, "40501")
			if r.header.Get("Allow") != "GET, HEAD, POST" {
				t.Errorf("%s /plants: Allow %q", m, r.header.Get("Allow"))
			}
		}
		for _, m := range []string{"POST", "FOO", "DELETE"} {
			r := s.do(t, m, "/openapi.yaml", h, body)
			r.expectError(t, 405, "40501")
			if r.header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s /openapi.yaml: Allow %q", m, r.header.Get("Allow"))
			}
		}
		for _, m := range []string{"GET", "POST", "PATCH", "FOO"} {
			for _, p := range []string{"/nope", "/plants%00", "/pl%00ants", "/" + strings.Repeat("a", 8192), "/plants/1/" + strings.Repeat("%00", 1000)} {
				s.do(t, m, p, h, body).expectError(t, 404, "40401")
			}
		}
		// A hostile id is a bad parameter, named and not echoed.
		r := s.do(t, "DELETE", "/plants/"+strings.Repeat("%00", 1000), h, nil)
		r.expectError(t, 400, "40002")
		if len(r.body) > 200 {
			t.Errorf("the refusal repeats the id: %s", r.body)
		}
	})

	expectHealthy(t, s)
}

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
func (s *service) rawExchange(t *testing.T, raw string) exchange {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.api, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%.60q: no response: %v", raw, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%.60q: reading the body: %v", raw, err)
	}
	return exchange{resp: resp, body: b, conn: conn, r: br}
}

// checkAPI validates an answer of the API against the OpenAPI document.
func (s *service) checkAPI(t *testing.T, e exchange, method, path string) {
	t.Helper()
	req, err := http.NewRequest(method, s.api+path, nil)
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

// TestMalformedFramingOverRawConnections sends what a well-behaved client
// cannot: broken chunked encodings, conflicting lengths, control characters
// in headers and paths. Framing the service reads itself is answered with
// an Error body, and so is what net/http refuses before the service sees the
// request (docs/security.md); in both cases the connection is closed.
func TestMalformedFramingOverRawConnections(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), nil)
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
		// The service reads nothing of a body it refuses by its declared
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
			if line := accessLine(t, s.logs.String(), id); !strings.Contains(line, `"route":"unparsed"`) || !strings.Contains(line, `"status":400`) {
				t.Errorf("%s: access line %s", tt.name, line)
			}
			e.expectClosed(t)
		}
	})

	t.Run("OPTIONS * is answered by the service", func(t *testing.T) {
		e := s.rawExchange(t, "OPTIONS * HTTP/1.1\r\nHost: x\r\nX-Request-ID: server-options\r\n\r\n")
		if e.resp.StatusCode != 200 || len(e.body) != 0 || e.resp.Header.Get("X-Request-ID") != "server-options" {
			t.Errorf("got %d %q %v, want an empty 200 with the request id", e.resp.StatusCode, e.body, e.resp.Header)
		}
		if line := accessLine(t, s.logs.String(), "server-options"); !strings.Contains(line, `"method":"OPTIONS"`) {
			t.Errorf("access line %s", line)
		}
	})

	expectHealthy(t, s)
}

// TestInjectionAttemptsAreStoredAsText sends names built to break SQL,
// templates, HTML and logs: they are plain text to the service, stored and
// answered exactly as sent, and the store keeps working.
func TestInjectionAttemptsAreStoredAsText(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, nil)
		names := []string{
			`'; DROP TABLE plants; --`, `Robert'); DROP TABLE plants;--`, `" OR "1"="1`, `1; SELECT pg_sleep(10)`,
			`\'; --`, `%s%n%x`, `${jndi:ldap://example.invalid/a}`, `{{7*7}}`, `<script>alert(1)</script>`,
			"line\u2028separator", "right-to-left \u202eoverride", `$1::text`, `?`, `E'\\x41'`,
		}
		for i, name := range names {
			const tag = `' OR ''='`
			body, err := json.Marshal(map[string]any{"id": 1000 + i, "name": name, "tag": tag})
			if err != nil {
				t.Fatal(err)
			}
			r := s.create(t, string(body))
			var got map[string]string
			if r.status != 200 || json.Unmarshal([]byte(r.body), &got) != nil || !maps.Equal(got, map[string]string{"name": name, "tag": tag}) {
				t.Fatalf("%q: got %d %s", name, r.status, r.body)
			}
			s.create(t, string(body)).expect(t, 200, r.body)
		}
		// A subject built to forge a log record stays inside its own field.
		forged := "eve\n{\"level\":\"ERROR\",\"msg\":\"forged\"}"
		s.do(t, "POST", "/plants", map[string]string{
			"Authorization": "Bearer " + s.token(t, jwt.MapClaims{"sub": forged}), "Content-Type": "application/json",
		}, []byte(`{"id":2000,"name":"a"}`)).expect(t, 200, `{"name":"a"}`)
		subjects := 0
		for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
			var record map[string]any
			if err := json.Unmarshal([]byte(line), &record); err != nil {
				t.Fatalf("a log line is not one JSON record: %q", line)
			}
			if record["subject"] == forged {
				subjects++
			}
		}
		if subjects != 1 {
			t.Fatalf("%d access lines carry the forged subject intact, want 1", subjects)
		}
		expectHealthy(t, s)
	})
}

// TestStartUpLineMasksDatabasePasswords checks the one place configuration
// is logged: the start-up line never shows a database password.
func TestStartUpLineMasksDatabasePasswords(t *testing.T) {
	for url, shown := range map[string]string{
		"postgres://plants:s3cr3t-pw@db.example:5432/plants?sslmode=disable":               "postgres://plants:xxxxx@db.example:5432/plants?sslmode=disable",
		"postgresql://db.example/plants?user=plants&password=s3cr3t-pw":                    "postgresql://db.example/plants?password=xxxxx&user=plants",
		"postgres://plants:pw@db.example/plants?password=s3cr3t-pw&sslpassword=s3cr3t-key": "postgres://plants:xxxxx@db.example/plants?password=xxxxx&sslpassword=xxxxx",
	} {
		getenv := func(k string) (string, bool) {
			if k == "PLANTSTORE_DATABASE_URL" {
				return url, true
			}
			return "", false
		}
		cfg, err := loadConfig("serve", nil, getenv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		slog.New(slog.NewJSONHandler(&out, nil)).Info("starting", cfg.Core.startUpLine...)
		if strings.Contains(out.String(), "s3cr3t") || !strings.Contains(out.String(), `"PLANTSTORE_DATABASE_URL":"`+shown+`"`) {
			t.Fatalf("start-up line for %s: %s", url, out.String())
		}
	}
}
