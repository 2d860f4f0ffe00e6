package jwtauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestPublicKeyFileAcceptsPKCS1AndCertificates(t *testing.T) {
	k := fixtures(t)
	rsaKey := k.rsa.private.(*rsa.PrivateKey)
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)})

	ecKey := k.p384.private.(*ecdsa.PrivateKey)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "issuer"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ecKey.PublicKey, ecKey)
	if err != nil {
		t.Fatal(err)
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	params := pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: []byte{6, 5, 43, 129, 4, 0, 34}})

	file := "a comment before the keys\n" + string(pkcs1) + string(params) + string(cert)
	v := newVerifier(t, Config{PublicKeyFile: writeFile(t, "keys.pem", []byte(file))})
	for _, tok := range []string{
		sign(t, jwt.SigningMethodRS256, rsaKey, claims(), nil),
		sign(t, jwt.SigningMethodES384, ecKey, claims(), nil),
	} {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Errorf("Verify: %v", err)
		}
	}
}

func TestPublicKeyFileRefuses(t *testing.T) {
	k := fixtures(t)
	smallRSA, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(k.p256.private)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content []byte
		wantErr string
	}{
		{"empty", nil, "no PEM-encoded public key"},
		{"not PEM", []byte("hello"), "no PEM-encoded public key"},
		{"private key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}), "private key"},
		{"private key after a public one", append(pemPublic(t, k.rsa.public), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1}})...), "block 2 is a private key"},
		{"unknown block", pem.EncodeToMemory(&pem.Block{Type: "SOMETHING", Bytes: []byte{1}}), "unsupported type"},
		{"broken key", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2, 3}}), "PEM block 1"},
		{"RSA 1024", pemPublic(t, &smallRSA.PublicKey), "too short"},
		{"P-224", pemPublic(t, &p224.PublicKey), "P-224 is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "keys.pem", tt.content)
			_, err := New(context.Background(), Config{PublicKeyFile: path})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error = %v, want one naming the file and mentioning %q", err, tt.wantErr)
			}
		})
	}
}
