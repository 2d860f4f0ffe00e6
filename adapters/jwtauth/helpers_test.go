package jwtauth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/application"
)

// testNow is the verifiers' clock in tests, so that token times are exact.
var testNow = time.Unix(1_900_000_000, 0)

func clockAt(t time.Time) func() time.Time { return func() time.Time { return t } }

// keyPair is a real private key with the algorithm it signs for.
type keyPair struct {
	private any
	public  any
}

// testKeys are generated once per test binary: RSA generation is slow.
type testKeys struct {
	rsa, rsaOther           keyPair
	p256, p384, p521, p256b keyPair
	ed, edOther             keyPair
	secret, secretOther     []byte
}

var (
	keysOnce sync.Once
	keys     testKeys
)

func fixtures(t testing.TB) *testKeys {
	t.Helper()
	keysOnce.Do(func() {
		keys = testKeys{
			rsa:         newRSA(),
			rsaOther:    newRSA(),
			p256:        newEC(elliptic.P256()),
			p256b:       newEC(elliptic.P256()),
			p384:        newEC(elliptic.P384()),
			p521:        newEC(elliptic.P521()),
			ed:          newEd25519(),
			edOther:     newEd25519(),
			secret:      randomSecret(48),
			secretOther: randomSecret(48),
		}
	})
	return &keys
}

func newRSA() keyPair {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return keyPair{k, &k.PublicKey}
}

func newEC(c elliptic.Curve) keyPair {
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		panic(err)
	}
	return keyPair{k, &k.PublicKey}
}

func newEd25519() keyPair {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return keyPair{priv, pub}
}

// randomSecret returns n random bytes that a secret file keeps as they are:
// ReadSecretFile drops a final line ending, so a last byte of '\n' (one
// secret in 256) would sign with one key and verify with another.
func randomSecret(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	if b[n-1] == '\n' {
		b[n-1] = 'x'
	}
	return b
}

// claims returns valid claims at testNow; edit the copy to break them.
func claims() jwt.MapClaims {
	return jwt.MapClaims{
		"sub":   "alice",
		"scope": "plants:write plants:read",
		"iat":   testNow.Unix(),
		"exp":   testNow.Add(5 * time.Minute).Unix(),
	}
}

// sign signs c with key under method; header entries are added to the
// token's header (a nil value removes one).
func sign(t testing.TB, method jwt.SigningMethod, key any, c jwt.Claims, header map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	for k, v := range header {
		if v == nil {
			delete(tok.Header, k)
		} else {
			tok.Header[k] = v
		}
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("sign %s: %v", method.Alg(), err)
	}
	return s
}

func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func pemPublic(t testing.TB, pubs ...any) []byte {
	t.Helper()
	var out []byte
	for _, pub := range pubs {
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
	}
	return out
}

func newVerifier(t testing.TB, cfg Config, opts ...Option) *Verifier {
	t.Helper()
	v, err := New(context.Background(), cfg, append([]Option{WithClock(clockAt(testNow))}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(v.Close)
	return v
}

// wantRefused checks that err is a token refusal for reason whose
// description is fit for a WWW-Authenticate header.
func wantRefused(t testing.TB, err error, reason string) {
	t.Helper()
	var te *application.TokenError
	if !errors.As(err, &te) {
		t.Fatalf("error = %v, want a *application.TokenError", err)
	}
	if !errors.Is(err, application.ErrInvalidToken) {
		t.Errorf("error %v does not match application.ErrInvalidToken", err)
	}
	if te.Reason != reason {
		t.Errorf("reason = %q (%s), want %q", te.Reason, te.Description, reason)
	}
	if te.Description == "" {
		t.Error("description is empty")
	}
	for _, r := range te.Description {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			t.Errorf("description %q has a character unfit for a quoted header value", te.Description)
			break
		}
	}
}

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
