package jwtauth

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Default values for the Config fields left at zero.
const (
	DefaultLeeway      = 30 * time.Second
	DefaultJWKSRefresh = time.Hour
)

// Config says where the verification keys come from and what a token must
// claim. At least one of SecretFile, PublicKeyFile and JWKSURL is required;
// several may be combined.
type Config struct {
	SecretFile    string        // file holding the HMAC secret (HS256/384/512)
	PublicKeyFile string        // PEM file with one or more public keys
	JWKSURL       string        // JWKS endpoint, http or https
	JWKSRefresh   time.Duration // how often the JWKS is fetched again; zero means DefaultJWKSRefresh
	Issuer        string        // required iss, when not empty
	Audience      string        // required entry of aud, when not empty
	Leeway        time.Duration // clock skew allowed on exp, nbf and iat; zero means DefaultLeeway
}

// KeySourceError is a key source of Config that New cannot use. Field is
// the name of its Config field (SecretFile, PublicKeyFile or JWKSURL), so
// that a caller can name the setting it came from.
type KeySourceError struct {
	Field string
	Err   error
}

func (e *KeySourceError) Error() string { return e.Err.Error() }
func (e *KeySourceError) Unwrap() error { return e.Err }

// Option adjusts a Verifier's collaborators.
type Option func(*options)

type options struct {
	logger     *slog.Logger
	registerer prometheus.Registerer
	clock      func() time.Time
	httpClient *http.Client

	// firstFetchRetry overrides how often a JWKS that failed its first
	// fetch is tried again; tests shorten it.
	firstFetchRetry time.Duration
}

// WithLogger sets where JWKS refresh failures and key problems are logged
// (slog.Default() otherwise).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithRegisterer registers the JWKS refresh metrics with r. Without it no
// metric is registered.
func WithRegisterer(r prometheus.Registerer) Option {
	return func(o *options) { o.registerer = r }
}

// WithClock sets the time source used to check exp, nbf and iat.
func WithClock(now func() time.Time) Option { return func(o *options) { o.clock = now } }

// WithHTTPClient sets the client that fetches the JWKS.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.httpClient = c } }
