package jwtauth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/application"
)

// maxTokenBytes bounds the work an unauthenticated caller can cause.
const maxTokenBytes = 8192

// Errors the keyfunc hands back through the jwt parser, told apart afterwards
// to give the refusal its reason.
var (
	errUnknownKey   = errors.New("no key fits the token")
	errKeyAlgorithm = errors.New("the key named by kid does not fit the token's algorithm")
	errHeader       = errors.New("unsupported token header")
)

// Verifier checks bearer tokens. It is safe for concurrent use.
type Verifier struct {
	parser   *jwt.Parser
	keyfunc  jwt.Keyfunc // v.keyFor, bound once so that Verify does not allocate it
	keys     atomic.Pointer[keyIndex]
	algs     []string
	secret   []byte
	static   []publicKey
	issuer   string
	audience string
	leeway   time.Duration
	now      func() time.Time
	cache    *verifiedCache
	jwks     *jwksSource // nil without a JWKS URL
}

var _ application.TokenVerifier = (*Verifier)(nil)

// New loads the configured keys and returns a Verifier. It fails when no key
// source is configured, when a file cannot be read or holds no usable key, or
// when a setting is out of range.
//
// A JWKS endpoint that cannot be reached at start does not fail New: the
// service starts, tokens that need those keys are refused as unknown_key, the
// failure is logged and counted, and the fetch is retried in the background
// (and on an unknown kid) until it succeeds. An identity provider that is
// briefly down should not keep a service from starting, and the outcome
// for a client is the same as a bad token. Close stops the background work.
func New(ctx context.Context, cfg Config, opts ...Option) (*Verifier, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if cfg.SecretFile == "" && cfg.PublicKeyFile == "" && cfg.JWKSURL == "" {
		return nil, errors.New("no token verification key configured: set a secret file, a public key file or a JWKS URL")
	}
	switch {
	case cfg.Leeway < 0:
		return nil, fmt.Errorf("token leeway %s is negative", cfg.Leeway)
	case cfg.Leeway == 0:
		cfg.Leeway = DefaultLeeway
	}
	switch {
	case cfg.JWKSRefresh < 0:
		return nil, fmt.Errorf("JWKS refresh interval %s is negative", cfg.JWKSRefresh)
	case cfg.JWKSRefresh == 0:
		cfg.JWKSRefresh = DefaultJWKSRefresh
	}

	v := &Verifier{issuer: cfg.Issuer, audience: cfg.Audience, leeway: cfg.Leeway, now: time.Now, cache: newVerifiedCache()}
	if o.clock != nil {
		v.now = o.clock
	}
	if cfg.SecretFile != "" {
		secret, err := ReadSecretFile(cfg.SecretFile)
		if err != nil {
			return nil, &KeySourceError{Field: "SecretFile", Err: err}
		}
		v.secret = secret
	}
	if cfg.PublicKeyFile != "" {
		keys, err := readPublicKeys(cfg.PublicKeyFile)
		if err != nil {
			return nil, &KeySourceError{Field: "PublicKeyFile", Err: err}
		}
		v.static = keys
	}
	v.algs = acceptedAlgs(v.secret, v.static, cfg.JWKSURL != "")
	parserOpts := []jwt.ParserOption{
		jwt.WithValidMethods(v.algs),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithStrictDecoding(),
	}
	if o.clock != nil {
		parserOpts = append(parserOpts, jwt.WithTimeFunc(o.clock))
	}
	v.parser = jwt.NewParser(parserOpts...)
	v.keyfunc = v.keyFor
	v.keys.Store(newKeyIndex(v.secret, v.static))

	if cfg.JWKSURL != "" {
		src, err := startJWKS(ctx, cfg.JWKSURL, cfg.JWKSRefresh, o, v.useJWKSKeys)
		if err != nil {
			return nil, &KeySourceError{Field: "JWKSURL", Err: err}
		}
		v.jwks = src
	}
	return v, nil
}

// Close stops the background JWKS refresh. The Verifier still answers with
// the keys it has.
func (v *Verifier) Close() {
	if v.jwks != nil {
		v.jwks.close()
	}
}

// useJWKSKeys puts a freshly fetched JWKS next to the static keys.
func (v *Verifier) useJWKSKeys(keys []publicKey) {
	v.keys.Store(newKeyIndex(v.secret, v.static, keys))
}

// Verify checks token and returns its bearer. A refusal is an
// *application.TokenError; Verify has no other errors.
func (v *Verifier) Verify(ctx context.Context, token string) (application.Principal, error) {
	if len(token) > maxTokenBytes {
		return application.Principal{}, refusedTooLarge.err()
	}
	keys := v.keys.Load()
	if p, ok := v.cache.get(token, keys, v.now()); ok {
		return p, nil
	}
	p, miss, err := v.verify(token, keys)
	if miss != nil && v.jwks.refetch(ctx, *miss) {
		keys = v.keys.Load()
		p, _, err = v.verify(token, keys)
	}
	return p, err
}

// verify checks token against the keys at hand. When the token may be signed
// by a JWKS key not fetched yet, it also returns the kid to look for.
// A verified token is remembered with keys, the key set loaded before the
// check, so that any change of keys makes it be verified again.
func (v *Verifier) verify(token string, keys *keyIndex) (application.Principal, *string, error) {
	var c tokenClaims
	tok, err := v.parser.ParseWithClaims(token, &c, v.keyfunc)
	if err != nil {
		r := v.classify(tok, err)
		return application.Principal{}, v.missedKID(tok, r), r.err()
	}
	if v.issuer != "" && c.Issuer != v.issuer {
		return application.Principal{}, nil, refusedIssuer.err()
	}
	if v.audience != "" && !slices.Contains(c.Audience, v.audience) {
		return application.Principal{}, nil, refusedAudience.err()
	}
	p := application.Principal{Subject: c.Subject, Scopes: c.scopes()}
	from, until := validity(&c, v.leeway)
	v.cache.put(token, cachedToken{principal: p, keys: keys, validFrom: from, validUntil: until})
	return p, nil, nil
}

// keyFor is the jwt.Keyfunc. It only ever returns keys whose type fits the
// token's algorithm, which the parser has already checked against v.algs.
func (v *Verifier) keyFor(tok *jwt.Token) (any, error) {
	if _, ok := tok.Header["crit"]; ok {
		return nil, errHeader // no critical extension is understood here (RFC 7515 4.1.11)
	}
	alg := tok.Method.Alg()
	idx := v.keys.Load()
	if kidValue, ok := tok.Header["kid"]; ok && !isHMAC(alg) {
		kid, ok := kidValue.(string)
		if !ok {
			return nil, errHeader
		}
		if k, ok := idx.byKID[kid]; ok {
			if !slices.Contains(k.algs, alg) {
				return nil, errKeyAlgorithm
			}
			return k.key, nil
		}
		if k, ok := idx.unnamed[alg]; ok {
			return k, nil
		}
		return nil, errUnknownKey
	}
	if k, ok := idx.all[alg]; ok {
		return k, nil
	}
	return nil, errUnknownKey
}

// classify turns a jwt parser error into a refusal. Claims errors come
// joined; the checks below pick the most telling one.
func (v *Verifier) classify(tok *jwt.Token, err error) refusal {
	switch {
	case errors.Is(err, errUnknownKey):
		return refusedUnknownKey
	case errors.Is(err, errKeyAlgorithm):
		return refusedAlgorithm
	case errors.Is(err, errHeader):
		return refusedMalformed
	case errors.Is(err, errScopeClaim):
		return refusedClaims
	case errors.Is(err, jwt.ErrTokenMalformed):
		return refusedMalformed
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return refusedAlgorithm // alg missing or unknown to the library
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		if tok != nil && tok.Method != nil && !slices.Contains(v.algs, tok.Method.Alg()) {
			return refusedAlgorithm
		}
		return refusedSignature
	case errors.Is(err, jwt.ErrTokenExpired):
		return refusedExpired
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return refusedNotYetValid
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return refusedNoExpiry // exp is the only claim the parser is told to require
	}
	return refusedClaims
}

// missedKID says whether fetching the JWKS again could change the outcome:
// the token's kid (possibly empty) is not among the keys at hand.
func (v *Verifier) missedKID(tok *jwt.Token, r refusal) *string {
	if v.jwks == nil || tok == nil || tok.Method == nil || isHMAC(tok.Method.Alg()) {
		return nil
	}
	kid, _ := tok.Header["kid"].(string)
	switch r {
	case refusedUnknownKey:
	case refusedSignature:
		if kid == "" {
			return nil
		}
		if _, known := v.keys.Load().byKID[kid]; known {
			return nil
		}
	default:
		return nil
	}
	return &kid
}
