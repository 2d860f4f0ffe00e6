package jwtauth

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNewRefusesBadConfig(t *testing.T) {
	k := fixtures(t)
	secret := writeFile(t, "secret", k.secret)
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"no key source", Config{Issuer: "x"}, "no token verification key configured"},
		{"missing secret file", Config{SecretFile: missing}, "missing"},
		{"short secret", Config{SecretFile: writeFile(t, "short", []byte("short\n"))}, "at least 32"},
		{"missing public key file", Config{PublicKeyFile: missing}, "missing"},
		{"negative leeway", Config{SecretFile: secret, Leeway: -time.Second}, "leeway"},
		{"negative JWKS refresh", Config{JWKSURL: "https://idp.example/jwks", JWKSRefresh: -time.Second}, "refresh"},
		{"relative JWKS URL", Config{JWKSURL: "/jwks.json"}, "not an absolute http or https URL"},
		{"JWKS URL of another scheme", Config{JWKSURL: "file:///etc/jwks.json"}, "not an absolute http or https URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := New(context.Background(), tt.cfg)
			if err == nil {
				v.Close()
				t.Fatal("New accepted the config")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}
