package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/docs/openapitest"
)

// service is one running, fully wired plantstore for a test.
type service struct {
	api, admin string        // base URLs
	keys       *jwttest.Keys // its HS256 secret and Ed25519 key (Ed) are configured
	logs       *syncBuffer
	contract   *openapitest.Contract
	client     *http.Client
}

// syncBuffer collects the service's log lines.
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

// storeURLs is the table of the stores the service runs on, for the tests
// of what each store changes in the process.
func storeURLs() map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "plants.db") },
		"postgres": func(t *testing.T) string { return pgtest.NewDatabase(t) },
	}
}

// forEachStore runs test against a service on each store.
func forEachStore(t *testing.T, test func(t *testing.T, databaseURL string)) {
	for name, url := range storeURLs() {
		t.Run(name, func(t *testing.T) { test(t, url(t)) })
	}
}

// startService starts the whole wired app with jwttest's secret and public
// keys configured, plus the given settings and fx options.
func startService(t testing.TB, databaseURL string, env map[string]string, opts ...fx.Option) *service {
	t.Helper()
	s := &service{keys: jwttest.New(t), logs: &syncBuffer{}, contract: openapitest.Load(t)}
	secretFile, publicKeyFile := s.keys.Files(t)

	vars := map[string]string{
		"PLANTSTORE_ADDR":                "127.0.0.1:0",
		"PLANTSTORE_ADMIN_ADDR":          "127.0.0.1:0",
		"PLANTSTORE_DATABASE_URL":        databaseURL,
		"PLANTSTORE_JWT_SECRET_FILE":     secretFile,
		"PLANTSTORE_JWT_PUBLIC_KEY_FILE": publicKeyFile,
		"PLANTSTORE_LOG_LEVEL":           "info",
	}
	maps.Copy(vars, env)
	cfg, err := loadConfig("serve", nil, envOf(vars), io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	var ls *Listeners
	app := newApp(cfg, s.logs, append(opts, fx.Populate(&ls))...)
	if err := app.Err(); err != nil {
		t.Fatalf("wiring: %v", startError(err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatalf("start: %v", startError(err))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := app.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	s.api = "http://" + ls.API.String()
	s.admin = "http://" + ls.Admin.String()
	s.client = &http.Client{Timeout: 30 * time.Second}
	return s
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

// token is jwttest's token for claims, which the service verifies.
func (s *service) token(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	return s.keys.Token(t, claims)
}

// do sends a request and checks the response against the OpenAPI document.
func (s *service) do(t *testing.T, method, path string, header map[string]string, body []byte) answer {
	t.Helper()
	req, err := http.NewRequest(method, s.api+path, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return answered(t, exchange(t, s.client, s.contract, req))
}

// create posts body to /plants with a valid token.
func (s *service) create(t *testing.T, body string) answer {
	t.Helper()
	header := map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/json"}
	return s.do(t, http.MethodPost, "/plants", header, []byte(body))
}

// call sends method to path with a valid token and no body.
func (s *service) call(t *testing.T, method, path string) answer {
	t.Helper()
	return s.do(t, method, path, map[string]string{"Authorization": "Bearer " + s.token(t, nil)}, nil)
}

func (s *service) adminGet(t *testing.T, path string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.admin+path, nil)
	require.NoError(t, err)
	return answered(t, exchange(t, s.client, nil, req))
}

// answered fails the test if a is no complete answer.
func answered(t *testing.T, a answer) answer {
	t.Helper()
	if a.err != nil {
		t.Fatal(a.err)
	}
	return a
}

func (r answer) expect(t *testing.T, status int, body string) {
	t.Helper()
	if r.status != status || (body != "" && r.body != body) {
		t.Fatalf("got %d %s, want %d %s", r.status, r.body, status, body)
	}
}

// expectError checks the status and the Error code.
func (r answer) expectError(t *testing.T, status int, code string) {
	t.Helper()
	if r.status != status || !strings.HasPrefix(r.body, `{"error":`+code+`,"message":"`) {
		t.Fatalf("got %d %s, want %d with error %s", r.status, r.body, status, code)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
}
