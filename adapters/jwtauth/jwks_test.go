package jwtauth

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// jwksServer is an identity provider's JWKS endpoint whose key set and health
// the test changes while a Verifier uses it.
type jwksServer struct {
	*httptest.Server
	hits     atomic.Int64
	failNext atomic.Int64 // requests still to answer with 502

	mu     sync.Mutex
	keys   map[string]any // kid -> public key
	status int
}

func newJWKSServer(t *testing.T, keys map[string]any) *jwksServer {
	t.Helper()
	s := &jwksServer{keys: map[string]any{}, status: http.StatusOK}
	for kid, k := range keys {
		s.keys[kid] = k
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if s.failNext.Add(-1) >= 0 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.status != http.StatusOK {
			w.WriteHeader(s.status)
			return
		}
		var set jwkset.JWKSMarshal
		for kid, pub := range s.keys {
			jwk, err := jwkset.NewJWKFromKey(pub, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: kid, USE: jwkset.UseSig}})
			if err != nil {
				t.Errorf("JWK for %s: %v", kid, err)
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			set.Keys = append(set.Keys, jwk.Marshal())
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) put(kid string, pub any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[kid] = pub
}

func (s *jwksServer) remove(kid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, kid)
}

func (s *jwksServer) setStatus(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = code
}

// waitHits waits until n more requests than now have reached the server.
// Refreshes run one after another, so after two more hits the first of them
// has been fully applied.
func (s *jwksServer) waitHits(t *testing.T, n int64) {
	t.Helper()
	target := s.hits.Load() + n
	require.Eventually(t, func() bool { return s.hits.Load() >= target }, time.Minute, time.Millisecond, fmt.Sprintf("%d JWKS fetches", n))
}

func kidHeader(kid string) map[string]any { return map[string]any{"kid": kid} }

func metricValue(t *testing.T, reg *prometheus.Registry, name string) (float64, bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		m := f.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue(), true
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

func TestJWKSAcceptsRSAECAndOKPKeys(t *testing.T) {
	k := fixtures(t)
	srv := newJWKSServer(t, map[string]any{
		"rsa": k.rsa.public, "p256": k.p256.public, "p384": k.p384.public, "p521": k.p521.public, "ed": k.ed.public,
	})
	v := newVerifier(t, Config{JWKSURL: srv.URL})
	tests := []struct {
		kid    string
		method jwt.SigningMethod
		key    any
	}{
		{"rsa", jwt.SigningMethodRS256, k.rsa.private},
		{"rsa", jwt.SigningMethodPS512, k.rsa.private},
		{"p256", jwt.SigningMethodES256, k.p256.private},
		{"p384", jwt.SigningMethodES384, k.p384.private},
		{"p521", jwt.SigningMethodES512, k.p521.private},
		{"ed", jwt.SigningMethodEdDSA, k.ed.private},
		{"", jwt.SigningMethodES384, k.p384.private}, // no kid: every EC P-384 key is tried
		{"", jwt.SigningMethodRS384, k.rsa.private},
	}
	for _, tt := range tests {
		t.Run(tt.kid+" "+tt.method.Alg(), func(t *testing.T) {
			var header map[string]any
			if tt.kid != "" {
				header = kidHeader(tt.kid)
			}
			if _, err := v.Verify(context.Background(), sign(t, tt.method, tt.key, claims(), header)); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
	if got := srv.hits.Load(); got != 1 {
		t.Errorf("JWKS fetched %d times, want once", got)
	}
}

func TestJWKSPinsTheAlgorithmToTheKey(t *testing.T) {
	k := fixtures(t)
	srv := newJWKSServer(t, map[string]any{"rsa": k.rsa.public, "p256": k.p256.public})
	rsaPEM := pemPublic(t, k.rsa.public)
	jwksOnly := newVerifier(t, Config{JWKSURL: srv.URL})
	withSecret := newVerifier(t, Config{JWKSURL: srv.URL, SecretFile: writeFile(t, "secret", k.secret)})
	tests := []struct {
		name   string
		v      *Verifier
		token  string
		reason string
	}{
		{"RS256 naming the EC key", jwksOnly, sign(t, jwt.SigningMethodRS256, k.rsa.private, claims(), kidHeader("p256")), "algorithm"},
		{"ES256 naming the RSA key", jwksOnly, sign(t, jwt.SigningMethodES256, k.p256.private, claims(), kidHeader("rsa")), "algorithm"},
		{"HS256 keyed with the RSA PEM, no secret", jwksOnly, sign(t, jwt.SigningMethodHS256, rsaPEM, claims(), kidHeader("rsa")), "algorithm"},
		{"HS256 keyed with the RSA PEM, with a secret", withSecret, sign(t, jwt.SigningMethodHS256, rsaPEM, claims(), kidHeader("rsa")), "signature"},
		{"RS256 by another key under a known kid", jwksOnly, sign(t, jwt.SigningMethodRS256, k.rsaOther.private, claims(), kidHeader("rsa")), "signature"},
		{"none", jwksOnly, sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims(), kidHeader("rsa")), "algorithm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.v.Verify(context.Background(), tt.token)
			wantRefused(t, err, tt.reason)
		})
	}
}

func TestJWKSHonoursTheKeyAlgAndUse(t *testing.T) {
	k := fixtures(t)
	body := func() []byte {
		var set jwkset.JWKSMarshal
		for _, m := range []jwkset.JWKMetadataOptions{
			{KID: "rs256-only", ALG: jwkset.AlgRS256},
			{KID: "enc", USE: jwkset.UseEnc},
		} {
			jwk, err := jwkset.NewJWKFromKey(k.rsa.public, jwkset.JWKOptions{Metadata: m})
			if err != nil {
				t.Fatal(err)
			}
			set.Keys = append(set.Keys, jwk.Marshal())
		}
		b, _ := json.Marshal(set)
		return b
	}()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) }))
	defer srv.Close()
	v := newVerifier(t, Config{JWKSURL: srv.URL})

	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, k.rsa.private, claims(), kidHeader("rs256-only"))); err != nil {
		t.Fatalf("RS256 under its declared alg: %v", err)
	}
	_, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodPS256, k.rsa.private, claims(), kidHeader("rs256-only")))
	wantRefused(t, err, "algorithm")
	_, err = v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, k.rsa.private, claims(), kidHeader("enc")))
	wantRefused(t, err, "unknown_key")
}

func TestJWKSFallsBackToStaticKeysForAnUnknownKID(t *testing.T) {
	k := fixtures(t)
	srv := newJWKSServer(t, map[string]any{"p256": k.p256.public})
	v := newVerifier(t, Config{JWKSURL: srv.URL, PublicKeyFile: writeFile(t, "rsa.pem", pemPublic(t, k.rsa.public))})
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, k.rsa.private, claims(), kidHeader("not-in-jwks"))); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got := srv.hits.Load(); got != 1 {
		t.Errorf("JWKS fetched %d times, want once: a token a static key verifies needs no refetch", got)
	}
}

func TestJWKSPicksUpANewKeyOnItsFirstToken(t *testing.T) {
	k := fixtures(t)
	srv := newJWKSServer(t, map[string]any{"old": k.p256.public})
	v := newVerifier(t, Config{JWKSURL: srv.URL}) // hourly refresh: only the unknown kid can fetch

	srv.put("new", k.ed.public)
	p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodEdDSA, k.ed.private, claims(), kidHeader("new")))
	if err != nil {
		t.Fatalf("token under a key added after start: %v", err)
	}
	if p.Subject != "alice" {
		t.Errorf("subject = %q", p.Subject)
	}
	if got := srv.hits.Load(); got != 2 {
		t.Errorf("JWKS fetched %d times, want 2", got)
	}
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodES256, k.p256.private, claims(), kidHeader("old"))); err != nil {
		t.Fatalf("token under the old key: %v", err)
	}
}

func TestJWKSRefetchesForUnknownKIDsAtMostOncePerMinute(t *testing.T) {
	k := fixtures(t)
	srv := newJWKSServer(t, map[string]any{"known": k.p256.public})
	v := newVerifier(t, Config{JWKSURL: srv.URL})

	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Go(func() {
			tok := sign(t, jwt.SigningMethodES256, k.p256b.private, claims(), kidHeader(fmt.Sprintf("forged-%d", i)))
			_, err := v.Verify(context.Background(), tok)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		wantRefused(t, err, "unknown_key")
	}
	if got := srv.hits.Load(); got != 2 {
		t.Fatalf("JWKS fetched %d times, want 2 (start and one refetch)", got)
	}

	// A key published now stays unknown until the minute has passed.
	srv.put("late", k.ed.public)
	_, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodEdDSA, k.ed.private, claims(), kidHeader("late")))
	wantRefused(t, err, "unknown_key")
	if got := srv.hits.Load(); got != 2 {
		t.Errorf("JWKS fetched %d times, want still 2", got)
	}
	// Known keys go on working without any fetch.
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodES256, k.p256.private, claims(), kidHeader("known"))); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func TestJWKSRefreshDropsARemovedKey(t *testing.T) {
	k := fixtures(t)
	srv := newJWKSServer(t, map[string]any{"stays": k.p256.public, "goes": k.ed.public})
	v := newVerifier(t, Config{JWKSURL: srv.URL, JWKSRefresh: 5 * time.Millisecond})
	goes := sign(t, jwt.SigningMethodEdDSA, k.ed.private, claims(), kidHeader("goes"))
	if _, err := v.Verify(context.Background(), goes); err != nil {
		t.Fatalf("before removal: %v", err)
	}

	srv.remove("goes")
	srv.waitHits(t, 2)
	_, err := v.Verify(context.Background(), goes)
	wantRefused(t, err, "unknown_key")
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodES256, k.p256.private, claims(), kidHeader("stays"))); err != nil {
		t.Fatalf("remaining key: %v", err)
	}
}

func TestJWKSOutageKeepsTheLastGoodKeys(t *testing.T) {
	k := fixtures(t)
	srv := newJWKSServer(t, map[string]any{"rsa": k.rsa.public})
	reg := prometheus.NewRegistry()
	var logs lockedBuffer
	v := newVerifier(t, Config{JWKSURL: srv.URL, JWKSRefresh: 5 * time.Millisecond},
		WithRegisterer(reg), WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	tok := sign(t, jwt.SigningMethodRS256, k.rsa.private, claims(), kidHeader("rsa"))
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("before the outage: %v", err)
	}
	if at, ok := metricValue(t, reg, "plantstore_jwks_last_refresh_success_timestamp_seconds"); !ok || at <= 0 {
		t.Errorf("last success gauge = %v, %v", at, ok)
	}
	failures := func() float64 {
		n, _ := metricValue(t, reg, "plantstore_jwks_refresh_failures_total")
		return n
	}

	srv.setStatus(http.StatusServiceUnavailable)
	require.Eventually(t, func() bool { return failures() >= 1 }, time.Minute, time.Millisecond, "a counted failure")
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("endpoint answering 503: %v", err)
	}
	_, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, k.rsaOther.private, claims(), kidHeader("other")))
	wantRefused(t, err, "unknown_key")

	srv.Close() // now the connection is refused
	before := failures()
	require.Eventually(t, func() bool { return failures() > before }, time.Minute, time.Millisecond, "another counted failure")
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("endpoint gone: %v", err)
	}
	if !strings.Contains(logs.String(), "JWKS fetch failed") || !strings.Contains(logs.String(), `"url":"`+srv.URL) {
		t.Errorf("the failure is not logged with its URL:\n%s", logs.String())
	}
}

func TestJWKSDownAtStartDoesNotPreventStart(t *testing.T) {
	k := fixtures(t)
	srv := newJWKSServer(t, map[string]any{"ed": k.ed.public})
	srv.setStatus(http.StatusInternalServerError)
	reg := prometheus.NewRegistry()
	v := newVerifier(t, Config{JWKSURL: srv.URL, JWKSRefresh: 5 * time.Millisecond},
		WithRegisterer(reg), WithLogger(slog.New(slog.DiscardHandler)))
	tok := sign(t, jwt.SigningMethodEdDSA, k.ed.private, claims(), kidHeader("ed"))
	_, err := v.Verify(context.Background(), tok)
	wantRefused(t, err, "unknown_key")
	if n, _ := metricValue(t, reg, "plantstore_jwks_refresh_failures_total"); n < 1 {
		t.Errorf("failures = %v, want at least 1", n)
	}

	srv.setStatus(http.StatusOK)
	require.Eventually(t, func() bool {
		at, _ := metricValue(t, reg, "plantstore_jwks_last_refresh_success_timestamp_seconds")
		return at > 0
	}, time.Minute, time.Millisecond, "a successful fetch")
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("after the endpoint came back: %v", err)
	}
}

func TestJWKSDownAtStartIsRetriedInTheBackground(t *testing.T) {
	k := fixtures(t)
	srv := newJWKSServer(t, map[string]any{"ed": k.ed.public})
	srv.failNext.Store(1)
	retryOften := func(o *options) { o.firstFetchRetry = 5 * time.Millisecond }
	v := newVerifier(t, Config{JWKSURL: srv.URL}, retryOften, WithLogger(slog.New(slog.DiscardHandler)))
	// No token arrives meanwhile and the periodic refresh is an hour away:
	// only the retry can fetch the keys.
	require.Eventually(t, func() bool { _, ok := v.keys.Load().byKID["ed"]; return ok }, time.Minute, time.Millisecond, "the keys")
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodEdDSA, k.ed.private, claims(), kidHeader("ed"))); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got := srv.hits.Load(); got != 2 {
		t.Errorf("JWKS fetched %d times, want 2 (the failed start and one retry)", got)
	}
}

func TestJWKSRefusesAHugeResponse(t *testing.T) {
	k := fixtures(t)
	jwk, err := jwkset.NewJWKFromKey(k.ed.public, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "ed"}})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := json.Marshal(jwk.Marshal())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A valid set whose key comes after a megabyte of white space.
		_, _ = w.Write([]byte(`{"keys":[` + strings.Repeat(" ", maxJWKSBytes) + string(key) + `]}`))
	}))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	v := newVerifier(t, Config{JWKSURL: srv.URL}, WithRegisterer(reg), WithLogger(slog.New(slog.DiscardHandler)))
	_, err = v.Verify(context.Background(), sign(t, jwt.SigningMethodEdDSA, k.ed.private, claims(), kidHeader("ed")))
	wantRefused(t, err, "unknown_key")
	if n, _ := metricValue(t, reg, "plantstore_jwks_refresh_failures_total"); n < 1 {
		t.Errorf("failures = %v, want at least 1", n)
	}
}

// countingTransport counts the requests that go through it.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestJWKSUsesTheGivenHTTPClientAndKeepsKeysAfterClose(t *testing.T) {
	k := fixtures(t)
	srv := newJWKSServer(t, map[string]any{"ed": k.ed.public})
	transport := &countingTransport{}
	v := newVerifier(t, Config{JWKSURL: srv.URL}, WithHTTPClient(&http.Client{Transport: transport}))
	if got := transport.n.Load(); got != 1 {
		t.Errorf("requests through the given client = %d, want 1", got)
	}
	v.Close()
	v.Close() // a second Close is harmless
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodEdDSA, k.ed.private, claims(), kidHeader("ed"))); err != nil {
		t.Fatalf("Verify after Close: %v", err)
	}
	_, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodEdDSA, k.edOther.private, claims(), kidHeader("unknown")))
	wantRefused(t, err, "unknown_key")
	if got := srv.hits.Load(); got != 1 {
		t.Errorf("JWKS fetched %d times, want once: nothing is fetched after Close", got)
	}
}

func TestJWKSMetricsOnlyWithAJWKSURL(t *testing.T) {
	k := fixtures(t)
	reg := prometheus.NewRegistry()
	newVerifier(t, Config{SecretFile: writeFile(t, "secret", k.secret)}, WithRegisterer(reg))
	if families, _ := reg.Gather(); len(families) != 0 {
		t.Errorf("metrics registered without a JWKS URL: %d families", len(families))
	}

	srv := newJWKSServer(t, map[string]any{"ed": k.ed.public})
	newVerifier(t, Config{JWKSURL: srv.URL}, WithRegisterer(reg))
	newVerifier(t, Config{JWKSURL: srv.URL}, WithRegisterer(reg)) // a second one shares the metrics
	if _, ok := metricValue(t, reg, "plantstore_jwks_refresh_failures_total"); !ok {
		t.Error("failure counter not registered")
	}
}
