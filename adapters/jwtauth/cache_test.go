package jwtauth

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// A reused token is served from the cache only while its time claims hold:
// once exp (plus leeway) has passed it is refused as expired, as on first use.
func TestReusedTokenStillExpires(t *testing.T) {
	k := fixtures(t)
	var now atomic.Int64
	now.Store(testNow.UnixNano())
	v := newVerifier(t, staticConfig(t), WithClock(func() time.Time { return time.Unix(0, now.Load()) }))
	tok := sign(t, jwt.SigningMethodHS256, k.secret, claims(), nil)
	ctx := context.Background()

	for range 3 {
		if p, err := v.Verify(ctx, tok); err != nil || p.Subject != "alice" {
			t.Fatalf("valid token: %v %v", p, err)
		}
	}
	now.Store(testNow.Add(5*time.Minute + DefaultLeeway - time.Second).UnixNano())
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatalf("within the leeway after exp: %v", err)
	}
	now.Store(testNow.Add(5*time.Minute + DefaultLeeway + time.Second).UnixNano())
	_, err := v.Verify(ctx, tok)
	wantRefused(t, err, "expired")
}

// A token that differs in any byte is verified on its own: the cache never
// vouches for a token it has not seen.
func TestCacheIsKeyedByTheWholeToken(t *testing.T) {
	k := fixtures(t)
	v := newVerifier(t, staticConfig(t))
	tok := sign(t, jwt.SigningMethodHS256, k.secret, claims(), nil)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	// The signature's first character carries six whole bits, so any other
	// character still decodes: the token is well formed, its signature wrong.
	sig := strings.LastIndexByte(tok, '.') + 1
	other := "A"
	if tok[sig] == 'A' {
		other = "B"
	}
	tampered := tok[:sig] + other + tok[sig+1:]
	_, err := v.Verify(context.Background(), tampered)
	wantRefused(t, err, "signature")
}

// A key set change (a JWKS refresh) makes every cached token be checked
// again; TestJWKS* cover removal end to end, this checks the mechanism.
func TestCachedTokenNeedsTheSameKeySet(t *testing.T) {
	k := fixtures(t)
	v := newVerifier(t, staticConfig(t))
	tok := sign(t, jwt.SigningMethodHS256, k.secret, claims(), nil)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.cache.get(tok, v.keys.Load(), testNow); !ok {
		t.Fatal("a verified token must be cached")
	}
	v.useJWKSKeys(nil)
	if _, ok := v.cache.get(tok, v.keys.Load(), testNow); ok {
		t.Fatal("a cached token must not be used with another key set")
	}
}
