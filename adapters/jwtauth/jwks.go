package jwtauth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

const (
	// jwksFetchTimeout bounds one fetch of the JWKS.
	jwksFetchTimeout = 10 * time.Second
	// maxJWKSBytes bounds the memory one JWKS response may take; real sets
	// are a few kilobytes.
	maxJWKSBytes = 1 << 20
	// unknownKIDRefetchEvery is the least time between two fetches caused by
	// tokens with a kid no key has; it keeps a flood of forged kids from
	// turning into a flood of requests to the identity provider.
	unknownKIDRefetchEvery = time.Minute
)

// jwksSource keeps the keys of one JWKS endpoint. Fetching, caching, periodic
// refresh and the refresh on an unknown kid are done by jwkset (the storage
// layer of keyfunc), which also parses the JWKs. This type hooks into it to
// index each new key set, count failures and keep retrying a first fetch
// that failed.
type jwksSource struct {
	url      string // redacted, for logs
	client   jwkset.Storage
	limiter  *rate.Limiter
	logger   *slog.Logger
	failures prometheus.Counter // nil without a registerer
	success  prometheus.Gauge   // nil without a registerer
	onKeys   func([]publicKey)

	generation atomic.Uint64 // successful fetches so far
	failing    atomic.Bool   // whether the last fetch failed
	closed     atomic.Bool   // no fetch after close, not even for a token

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startJWKS fetches the JWKS once (a failure is logged, not returned) and
// starts refreshing it every refresh.
func startJWKS(ctx context.Context, rawURL string, refresh time.Duration, o options, onKeys func([]publicKey)) (*jwksSource, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("JWKS URL %q is not an absolute http or https URL", rawURL)
	}
	s := &jwksSource{
		url:     u.Redacted(),
		limiter: rate.NewLimiter(rate.Every(unknownKIDRefetchEvery), 1),
		logger:  o.logger,
		onKeys:  onKeys,
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if err := s.register(o.registerer); err != nil {
		return nil, err
	}
	var httpClient http.Client
	if o.httpClient != nil {
		httpClient = *o.httpClient
	}
	httpClient.Transport = limitedBody{base: httpClient.Transport}

	// The refresh goroutine outlives the caller's context (often a start-up
	// context that ends once the service runs); Close ends it.
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	store, err := jwkset.NewStorageFromHTTP(rawURL, jwkset.HTTPClientStorageOptions{
		Client:                    &httpClient,
		Ctx:                       bg,
		HTTPTimeout:               jwksFetchTimeout,
		NoErrorReturnFirstHTTPReq: true,
		RefreshErrorHandler:       s.fetchFailed,
		RefreshInterval:           refresh,
		Storage:                   indexingStore{Storage: jwkset.NewMemoryStorage(), replaced: s.fetched},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("JWKS URL %s: %w", s.url, err)
	}
	s.client, err = jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs: map[string]jwkset.Storage{rawURL: store},
		// Also the deadline of the fetch that follows the wait.
		RateLimitWaitMax:  jwksFetchTimeout,
		RefreshUnknownKID: s.limiter,
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("JWKS URL %s: %w", s.url, err)
	}
	if s.generation.Load() == 0 {
		retry := min(refresh, unknownKIDRefetchEvery)
		if o.firstFetchRetry > 0 {
			retry = o.firstFetchRetry
		}
		s.wg.Add(1)
		go s.retryFirstFetch(bg, retry)
	}
	return s, nil
}

func (s *jwksSource) register(r prometheus.Registerer) error {
	if r == nil {
		return nil
	}
	failures := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "plantstore_jwks_refresh_failures_total",
		Help: "Fetches of the JWKS that failed; the keys fetched before stay in use.",
	})
	success := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "plantstore_jwks_last_refresh_success_timestamp_seconds",
		Help: "Unix time of the last successful fetch of the JWKS.",
	})
	var err error
	if s.failures, err = registerOrReuse(r, failures); err != nil {
		return err
	}
	if s.success, err = registerOrReuse(r, success); err != nil {
		return err
	}
	return nil
}

// registerOrReuse lets a second Verifier in one process (tests, a restarted
// fx app) share the metric of the first instead of failing.
func registerOrReuse[C prometheus.Collector](r prometheus.Registerer, c C) (C, error) {
	err := r.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	if err != nil {
		return c, fmt.Errorf("register JWKS metrics: %w", err)
	}
	return c, nil
}

// refetch fetches the JWKS again for a token whose kid (possibly empty) is
// unknown, unless a fetch for that reason happened within the last
// unknownKIDRefetchEvery. It never waits for the rate limit: a refused token
// costs the client less than a request held for up to a minute. It reports
// whether a fetch succeeded, so that the token is worth checking again.
func (s *jwksSource) refetch(ctx context.Context, kid string) bool {
	if s.closed.Load() || s.limiter.Tokens() < 1 {
		return false
	}
	before := s.generation.Load()
	// jwkset fetches only when kid is not known, waiting on the limiter
	// first; the check above makes that wait immediate.
	_, _ = s.client.KeyRead(ctx, kid)
	return s.generation.Load() != before
}

// retryFirstFetch covers a JWKS that was down at start: the periodic refresh
// alone might not try again for an hour. It shares the unknown-kid rate
// limit, so the endpoint sees at most one such extra fetch a minute.
func (s *jwksSource) retryFirstFetch(ctx context.Context, every time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for s.generation.Load() == 0 {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.refetch(ctx, "")
		}
	}
}

func (s *jwksSource) close() {
	s.closed.Store(true)
	s.cancel()
	s.wg.Wait()
}

func (s *jwksSource) fetchFailed(ctx context.Context, err error) {
	s.failing.Store(true)
	if s.failures != nil {
		s.failures.Inc()
	}
	msg := "JWKS fetch failed; keeping the keys fetched before"
	if s.generation.Load() == 0 {
		// Every token is refused until a fetch succeeds.
		msg = "JWKS fetch failed; no keys yet, so no token can be verified"
	}
	s.logger.WarnContext(ctx, msg, "url", s.url, "error", err.Error())
}

func (s *jwksSource) fetched(ctx context.Context, set []jwkset.JWK) {
	keys := make([]publicKey, 0, len(set))
	for _, jwk := range set {
		m := jwk.Marshal()
		if m.USE == jwkset.UseEnc {
			continue
		}
		key := jwk.Key()
		if priv, ok := key.(interface{ Public() crypto.PublicKey }); ok {
			key = priv.Public()
		}
		k, err := newPublicKey(m.KID, key, m.ALG.String())
		if err != nil {
			s.logger.WarnContext(ctx, "JWKS key skipped", "url", s.url, "kid", m.KID, "error", err.Error())
			continue
		}
		keys = append(keys, k)
	}
	s.onKeys(keys)
	s.generation.Add(1)
	if s.success != nil {
		s.success.SetToCurrentTime()
	}
	if s.failing.Swap(false) {
		s.logger.InfoContext(ctx, "JWKS fetch succeeded again", "url", s.url, "keys", len(keys))
	} else {
		s.logger.DebugContext(ctx, "JWKS fetched", "url", s.url, "keys", len(keys))
	}
}

// indexingStore is jwkset's in-memory key storage, told when a fetch has
// replaced its keys: jwkset calls KeyReplaceAll once per successful fetch.
type indexingStore struct {
	jwkset.Storage
	replaced func(context.Context, []jwkset.JWK)
}

// KeyReplaceAll implements jwkset.Storage.
func (s indexingStore) KeyReplaceAll(ctx context.Context, given []jwkset.JWK) error {
	if err := s.Storage.KeyReplaceAll(ctx, given); err != nil {
		return err
	}
	s.replaced(ctx, given)
	return nil
}

// limitedBody cuts JWKS responses off at maxJWKSBytes, so that a broken or
// hostile endpoint cannot exhaust memory; the cut-off body fails to decode
// and the fetch counts as failed.
type limitedBody struct{ base http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (l limitedBody) RoundTrip(req *http.Request) (*http.Response, error) {
	base := l.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = http.MaxBytesReader(nil, resp.Body, maxJWKSBytes)
	return resp, nil
}
