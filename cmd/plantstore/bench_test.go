package main

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
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/adapters/httpapi"
	"github.com/plantstore/plantstore/adapters/jwtauth"
	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/docs"
)

// BenchmarkRequestPath is one create through the real router with real token
// verification per algorithm, decoding, validation, the use case, the
// in-memory store (a replay after the first request), encoding and the access
// log.
func BenchmarkRequestPath(b *testing.B) {
	dir := b.TempDir()
	secret := []byte("a-benchmark-secret-that-is-long-enough")
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	edPub, edKey, _ := ed25519.GenerateKey(rand.Reader)
	var pemBytes []byte
	for _, pub := range []any{&rsaKey.PublicKey, &ecKey.PublicKey, edPub} {
		der, _ := x509.MarshalPKIXPublicKey(pub)
		pemBytes = append(pemBytes, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
	}
	must(b, os.WriteFile(filepath.Join(dir, "secret"), secret, 0o600))
	must(b, os.WriteFile(filepath.Join(dir, "keys.pem"), pemBytes, 0o600))
	v, err := jwtauth.New(context.Background(), jwtauth.Config{
		SecretFile: filepath.Join(dir, "secret"), PublicKeyFile: filepath.Join(dir, "keys.pem"),
	})
	must(b, err)
	defer v.Close()
	scopes := application.Scopes{Read: "plants:read", Write: "plants:write"}
	store := memory.New()
	api, err := httpapi.New(httpapi.Config{OpenAPI: docs.OpenAPI}, httpapi.Deps{
		Create:   application.NewCreatePlant(store, scopes),
		Verifier: v,
		Log:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	must(b, err)

	claims := jwt.MapClaims{"sub": "bench", "scope": "plants:write", "exp": time.Now().Add(time.Hour).Unix()}
	body := []byte(`{"id":12345,"name":"Monstera deliciosa","tag":"tropical"}`)
	for _, alg := range []struct {
		name   string
		method jwt.SigningMethod
		key    any
	}{
		{"HS256", jwt.SigningMethodHS256, secret},
		{"RS256", jwt.SigningMethodRS256, rsaKey},
		{"ES256", jwt.SigningMethodES256, ecKey},
		{"EdDSA", jwt.SigningMethodEdDSA, edKey},
	} {
		tok, err := jwt.NewWithClaims(alg.method, claims).SignedString(alg.key)
		must(b, err)
		req := httptest.NewRequest(http.MethodPost, "/plants", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		b.Run(alg.name, func(b *testing.B) {
			w := &nullWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				r := *req
				r.Body = io.NopCloser(bytes.NewReader(body))
				clear(w.h)
				api.ServeHTTP(w, &r)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// nullWriter is the cheapest http.ResponseWriter, so that the benchmark
// measures the service and not the recorder.
type nullWriter struct {
	h      http.Header
	status int
}

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) WriteHeader(s int)           { w.status = s }
func (w *nullWriter) Write(p []byte) (int, error) { return len(p), nil }

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
