package jwtauth

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMintHS256MakesTokensTheVerifierAccepts(t *testing.T) {
	k := fixtures(t)
	v, err := New(context.Background(), Config{
		SecretFile: writeFile(t, "secret", k.secret),
		Issuer:     "plantstore-dev",
		Audience:   "plantstore",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	tok, err := MintHS256(k.secret, "dev", []string{"plants:write", "plants:read"}, time.Hour, "plantstore-dev", "plantstore")
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if p.Subject != "dev" || !slices.Equal(p.Scopes, []string{"plants:write", "plants:read"}) {
		t.Errorf("principal = %+v", p)
	}

	later := newVerifier(t, Config{SecretFile: writeFile(t, "secret", k.secret)},
		WithClock(func() time.Time { return time.Now().Add(time.Hour + DefaultLeeway + time.Minute) }))
	_, err = later.Verify(context.Background(), tok)
	wantRefused(t, err, "expired")
}

func TestMintHS256Refuses(t *testing.T) {
	k := fixtures(t)
	tests := []struct {
		name    string
		secret  []byte
		scopes  []string
		ttl     time.Duration
		wantErr string
	}{
		{"short secret", []byte("short"), nil, time.Hour, "at least 32"},
		{"empty secret", nil, nil, time.Hour, "empty"},
		{"zero ttl", k.secret, nil, 0, "not positive"},
		{"scope with a space", k.secret, []string{"plants write"}, time.Hour, "scope"},
		{"empty scope", k.secret, []string{""}, time.Hour, "scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MintHS256(tt.secret, "dev", tt.scopes, tt.ttl, "", "")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}
