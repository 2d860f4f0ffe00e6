package httpapi

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/docs"
	"github.com/plantstore/plantstore/docs/openapitest"
)

// The contract tests serve the API as the service does: the real router and
// use cases over the memory store, a real jwtauth verifier checking really
// signed tokens, the listener that rewrites net/http's own refusals, the
// connection limit and an http.Server from NewServer. Every answer they read
// is checked against the OpenAPI document.

// testServer is one API served on a loopback port for a test.
type testServer struct {
	url      string
	api      *API
	keys     *jwttest.Keys
	logs     *syncBuffer
	metrics  *prometheus.Registry
	contract *openapitest.Contract
	client   *http.Client
	conns    *ConnLimit
}

// serverConfig is what a test may change of its server.
type serverConfig struct {
	maxBody int64
	scopes  application.Scopes
	limits  ServerLimits
	store   *memory.Store
	adm     Admission
	timeout time.Duration
}

type serverOption func(*serverConfig)

// withMaxBody sets the request body limit (DefaultMaxBodyBytes otherwise).
func withMaxBody(n int64) serverOption { return func(c *serverConfig) { c.maxBody = n } }

// withReadScope sets the scope reads need; "" turns the check off.
func withReadScope(s string) serverOption { return func(c *serverConfig) { c.scopes.Read = s } }

// withLimits sets the server's limits (net/http's defaults otherwise).
func withLimits(l ServerLimits) serverOption { return func(c *serverConfig) { c.limits = l } }

// withStore serves store, a memory store a test may seed or fail.
func withStore(s *memory.Store) serverOption { return func(c *serverConfig) { c.store = s } }

// withMaxConns caps the open connections (DefaultMaxConnections otherwise).
func withMaxConns(n int) serverOption { return func(c *serverConfig) { c.adm.MaxConnections = n } }

// withClientShare caps the open connections of one client address (the
// whole cap otherwise).
func withClientShare(n int) serverOption { return func(c *serverConfig) { c.adm.PerClient = n } }

// withRequestTimeout sets each request's deadline (none otherwise).
func withRequestTimeout(d time.Duration) serverOption { return func(c *serverConfig) { c.timeout = d } }

// startServer serves the API until the test ends.
func startServer(t *testing.T, opts ...serverOption) *testServer {
	t.Helper()
	cfg := serverConfig{scopes: everyScope, store: memory.New()}
	for _, o := range opts {
		o(&cfg)
	}
	s := &testServer{
		keys:     jwttest.New(t),
		logs:     &syncBuffer{},
		metrics:  prometheus.NewRegistry(),
		contract: openapitest.Load(t),
		client:   &http.Client{Timeout: 30 * time.Second},
	}
	log := slog.New(slog.NewJSONHandler(s.logs, nil))
	deps := useCases(cfg.store, cfg.scopes)
	deps.Verifier, deps.Log, deps.Metrics = s.keys.Verifier(t), log, s.metrics
	api, err := New(Config{MaxBodyBytes: cfg.maxBody, OpenAPI: docs.OpenAPI, RequestTimeout: cfg.timeout}, deps)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(api, cfg.limits, log)
	s.conns = api.ConnLimit(cfg.adm)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(s.conns.Limit(srv, api.Listener(ln))) }()
	t.Cleanup(func() {
		s.client.CloseIdleConnections()
		_ = srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	s.url, s.api = "http://"+ln.Addr().String(), api
	return s
}

// token signs claims with the verifier's HS256 secret; see jwttest.Keys.Token.
func (s *testServer) token(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	return s.keys.Token(t, claims)
}

// response is what a test sees of one exchange.
type response struct {
	status int
	header http.Header
	body   string
}

// request builds a request to path with every value of header.
func (s *testServer) request(t *testing.T, method, path string, header http.Header, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, body)
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

// send sends req and checks the response against the OpenAPI document.
func (s *testServer) send(t *testing.T, req *http.Request) response {
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

// do sends one request with the given headers and body.
func (s *testServer) do(t *testing.T, method, path string, header map[string]string, body []byte) response {
	t.Helper()
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	return s.send(t, s.request(t, method, path, h, bytes.NewReader(body)))
}

// create posts body to /plants with a valid token.
func (s *testServer) create(t *testing.T, body string) response {
	t.Helper()
	return s.do(t, http.MethodPost, "/plants", map[string]string{
		"Authorization": "Bearer " + s.token(t, nil),
		"Content-Type":  "application/json",
	}, []byte(body))
}

// call sends method to path with a valid token and no body.
func (s *testServer) call(t *testing.T, method, path string) response {
	t.Helper()
	return s.do(t, method, path, map[string]string{"Authorization": "Bearer " + s.token(t, nil)}, nil)
}

// expect checks the status and, unless body is "", the body.
func (r response) expect(t *testing.T, status int, body string) {
	t.Helper()
	if r.status != status || (body != "" && r.body != body) {
		t.Fatalf("got %d %s, want %d %s", r.status, r.body, status, body)
	}
}

// expectError checks the status and the Error code.
func (r response) expectError(t *testing.T, status int, code string) {
	t.Helper()
	if r.status != status || !strings.HasPrefix(r.body, `{"error":`+code+`,"message":"`) {
		t.Fatalf("got %d %s, want %d with error %s", r.status, r.body, status, code)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
}

// accessLine is the access line of the request with the given id. It is
// written once the answer is sent, so the client may have the answer first.
func (s *testServer) accessLine(t *testing.T, id string) string {
	t.Helper()
	find := func() string {
		for l := range strings.SplitSeq(s.logs.String(), "\n") {
			if strings.Contains(l, `"request_id":"`+id+`"`) {
				return l
			}
		}
		return ""
	}
	require.Eventually(t, func() bool { return find() != "" }, time.Minute, time.Millisecond,
		"no access line with request id %s in:\n%s", id, s.logs.String())
	return find()
}

// expectHealthy checks that the API still stores plants and that nothing
// it logged was an error.
func (s *testServer) expectHealthy(t *testing.T) {
	t.Helper()
	s.create(t, `{"id":987654321,"name":"still serving"}`).expect(t, 200, `{"name":"still serving"}`)
	for line := range strings.SplitSeq(s.logs.String(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("the API logged an error: %s", line)
		}
	}
}

// syncBuffer collects log lines written from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
