// Package jwttest mints really signed tokens and builds a real jwtauth
// verifier that checks them, so that the tests of an adapter that
// authenticates requests go through the same verification as the service,
// with no fake verifier to drift from it.
package jwttest

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/adapters/jwtauth"
)

// Keys are the keys a test signs with: an HS256 secret and one RSA, ECDSA
// P-256 and Ed25519 key, each of which the verifier from Verifier trusts,
// and an Ed25519 key it does not know.
type Keys struct {
	Secret  []byte
	RSA     *rsa.PrivateKey
	EC      *ecdsa.PrivateKey
	Ed      ed25519.PrivateKey
	Unknown ed25519.PrivateKey
}

var (
	once   sync.Once
	shared *Keys
)

// New returns the test binary's keys. They are generated once, since an
// RSA key takes a while, and are never used outside tests.
func New(t testing.TB) *Keys {
	t.Helper()
	once.Do(func() { shared = generate() })
	return shared
}

func generate() *Keys {
	k := &Keys{Secret: []byte("a-test-secret-that-is-long-enough-for-hs256")}
	var err error
	if k.RSA, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	if k.EC, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		panic(err)
	}
	if _, k.Ed, err = ed25519.GenerateKey(rand.Reader); err != nil {
		panic(err)
	}
	if _, k.Unknown, err = ed25519.GenerateKey(rand.Reader); err != nil {
		panic(err)
	}
	return k
}

// Files writes the secret and the PEM public halves of the RSA, ECDSA and
// Ed25519 keys into files of a temporary directory, as an operator would
// configure them (PLANTSTORE_JWT_SECRET_FILE, PLANTSTORE_JWT_PUBLIC_KEY_FILE).
func (k *Keys) Files(t testing.TB) (secretFile, publicKeyFile string) {
	t.Helper()
	dir := t.TempDir()
	var pemBytes []byte
	for _, pub := range []any{&k.RSA.PublicKey, &k.EC.PublicKey, k.Ed.Public()} {
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		pemBytes = append(pemBytes, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
	}
	secretFile, publicKeyFile = filepath.Join(dir, "secret"), filepath.Join(dir, "keys.pem")
	if err := os.WriteFile(secretFile, slices.Concat(k.Secret, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(publicKeyFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return secretFile, publicKeyFile
}

// Verifier is a real jwtauth verifier that trusts the secret and the
// public halves of the RSA, ECDSA and Ed25519 keys, closed when t ends.
func (k *Keys) Verifier(t testing.TB, opts ...jwtauth.Option) *jwtauth.Verifier {
	t.Helper()
	var cfg jwtauth.Config
	cfg.SecretFile, cfg.PublicKeyFile = k.Files(t)
	v, err := jwtauth.New(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// Token signs claims with the HS256 secret. Unless claims say otherwise the
// token is alice's, grants plants:read and plants:write and expires in an
// hour; a nil value removes a claim.
func (k *Keys) Token(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	return k.Sign(t, jwt.SigningMethodHS256, k.Secret, claims)
}

// Sign signs the same claims as Token with key under method.
func (k *Keys) Sign(t testing.TB, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	c := jwt.MapClaims{"sub": "alice", "scope": "plants:read plants:write", "exp": time.Now().Add(time.Hour).Unix()}
	for name, v := range claims {
		if v == nil {
			delete(c, name)
		} else {
			c[name] = v
		}
	}
	tok, err := jwt.NewWithClaims(method, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Scoped is a valid token that grants scope alone ("" grants none).
func (k *Keys) Scoped(t testing.TB, scope string) string {
	t.Helper()
	return k.Token(t, jwt.MapClaims{"scope": scope})
}

// Expired is a token that expired an hour ago.
func (k *Keys) Expired(t testing.TB) string {
	t.Helper()
	return k.Token(t, jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()})
}

// UnknownKey is a token signed by an Ed25519 key the verifier does not know.
func (k *Keys) UnknownKey(t testing.TB) string {
	t.Helper()
	return k.Sign(t, jwt.SigningMethodEdDSA, k.Unknown, nil)
}

// AlgNone is an unsigned token, alg "none".
func (k *Keys) AlgNone(t testing.TB) string {
	t.Helper()
	return k.Sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, nil)
}
