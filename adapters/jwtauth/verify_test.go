package jwtauth

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// staticConfig configures a secret file and a PEM file holding a key of every
// supported type.
func staticConfig(t testing.TB) Config {
	k := fixtures(t)
	return Config{
		SecretFile:    writeFile(t, "secret", append(append([]byte{}, k.secret...), '\n')),
		PublicKeyFile: writeFile(t, "keys.pem", pemPublic(t, k.rsa.public, k.p256.public, k.p384.public, k.p521.public, k.ed.public)),
	}
}

func TestVerifyAcceptsEveryAlgorithm(t *testing.T) {
	k := fixtures(t)
	v := newVerifier(t, staticConfig(t))
	tests := []struct {
		method jwt.SigningMethod
		key    any
	}{
		{jwt.SigningMethodHS256, k.secret},
		{jwt.SigningMethodHS384, k.secret},
		{jwt.SigningMethodHS512, k.secret},
		{jwt.SigningMethodRS256, k.rsa.private},
		{jwt.SigningMethodRS384, k.rsa.private},
		{jwt.SigningMethodRS512, k.rsa.private},
		{jwt.SigningMethodPS256, k.rsa.private},
		{jwt.SigningMethodPS384, k.rsa.private},
		{jwt.SigningMethodPS512, k.rsa.private},
		{jwt.SigningMethodES256, k.p256.private},
		{jwt.SigningMethodES384, k.p384.private},
		{jwt.SigningMethodES512, k.p521.private},
		{jwt.SigningMethodEdDSA, k.ed.private},
	}
	for _, tt := range tests {
		t.Run(tt.method.Alg(), func(t *testing.T) {
			p, err := v.Verify(context.Background(), sign(t, tt.method, tt.key, claims(), nil))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if p.Subject != "alice" || !slices.Equal(p.Scopes, []string{"plants:write", "plants:read"}) {
				t.Errorf("principal = %+v", p)
			}
		})
	}
}

func TestVerifyAcceptsTimesWithinLeeway(t *testing.T) {
	k := fixtures(t)
	v := newVerifier(t, staticConfig(t))
	tests := map[string]func(jwt.MapClaims){
		"expired 29s ago": func(c jwt.MapClaims) { c["exp"] = testNow.Add(-29 * time.Second).Unix() },
		"nbf 29s ahead":   func(c jwt.MapClaims) { c["nbf"] = testNow.Add(29 * time.Second).Unix() },
		"iat 29s ahead":   func(c jwt.MapClaims) { c["iat"] = testNow.Add(29 * time.Second).Unix() },
		"no sub":          func(c jwt.MapClaims) { delete(c, "sub") },
		"no iat":          func(c jwt.MapClaims) { delete(c, "iat") },
		"fractional exp":  func(c jwt.MapClaims) { c["exp"] = float64(testNow.Unix()) + 60.5 },
		"nbf and iat in the past": func(c jwt.MapClaims) {
			c["nbf"], c["iat"] = testNow.Add(-time.Hour).Unix(), testNow.Add(-time.Hour).Unix()
		},
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			c := claims()
			edit(c)
			if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodES256, k.p256.private, c, nil)); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
}

func TestVerifyLeewayIsConfigurable(t *testing.T) {
	k := fixtures(t)
	cfg := staticConfig(t)
	cfg.Leeway = 2 * time.Minute
	v := newVerifier(t, cfg)
	c := claims()
	c["exp"] = testNow.Add(-90 * time.Second).Unix()
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, k.secret, c, nil)); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func TestVerifyRefuses(t *testing.T) {
	k := fixtures(t)
	rsaPEM := pemPublic(t, k.rsa.public)
	pemOnly := Config{PublicKeyFile: writeFile(t, "rsa.pem", rsaPEM)}
	both := Config{
		SecretFile:    writeFile(t, "secret", k.secret),
		PublicKeyFile: writeFile(t, "rsa.pem", rsaPEM),
	}
	all := staticConfig(t)
	withIssAud := staticConfig(t)
	withIssAud.Issuer, withIssAud.Audience = "https://issuer.example", "plantstore"

	valid := sign(t, jwt.SigningMethodRS256, k.rsa.private, claims(), nil)
	parts := strings.Split(valid, ".")
	enc := base64.RawURLEncoding.EncodeToString

	edited := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := claims()
		edit(c)
		return c
	}
	issAud := func(iss string, aud any) jwt.MapClaims {
		return edited(func(c jwt.MapClaims) {
			if iss != "" {
				c["iss"] = iss
			}
			if aud != nil {
				c["aud"] = aud
			}
		})
	}
	noneToken := sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims(), nil)
	unsigned := func(header string) string {
		return enc([]byte(header)) + "." + parts[1] + "."
	}

	tests := []struct {
		name   string
		cfg    Config
		token  string
		reason string
	}{
		{"alg none", all, noneToken, "algorithm"},
		{"alg NONE", all, unsigned(`{"alg":"NONE","typ":"JWT"}`), "algorithm"},
		{"alg none with a signature", all, unsigned(`{"alg":"none"}`) + parts[2], "algorithm"},
		{"alg missing", all, enc([]byte(`{"typ":"JWT"}`)) + "." + parts[1] + "." + parts[2], "algorithm"},
		{"alg unknown", all, enc([]byte(`{"alg":"XS256"}`)) + "." + parts[1] + "." + parts[2], "algorithm"},
		{"HS256 with the PEM as secret, PEM only", pemOnly, sign(t, jwt.SigningMethodHS256, rsaPEM, claims(), nil), "algorithm"},
		{"HS256 with the PEM as secret, secret and PEM", both, sign(t, jwt.SigningMethodHS256, rsaPEM, claims(), nil), "signature"},
		{"HS256 with the DER key as secret", both, sign(t, jwt.SigningMethodHS256, pemDER(t, rsaPEM), claims(), nil), "signature"},
		{"ES256 without an EC key", pemOnly, sign(t, jwt.SigningMethodES256, k.p256.private, claims(), nil), "algorithm"},
		{"HS256 without a secret", pemOnly, sign(t, jwt.SigningMethodHS256, k.secret, claims(), nil), "algorithm"},
		{"RS256 wrong key", all, sign(t, jwt.SigningMethodRS256, k.rsaOther.private, claims(), nil), "signature"},
		{"PS256 wrong key", all, sign(t, jwt.SigningMethodPS256, k.rsaOther.private, claims(), nil), "signature"},
		{"ES256 wrong key", all, sign(t, jwt.SigningMethodES256, k.p256b.private, claims(), nil), "signature"},
		{"EdDSA wrong key", all, sign(t, jwt.SigningMethodEdDSA, k.edOther.private, claims(), nil), "signature"},
		{"HS256 wrong secret", all, sign(t, jwt.SigningMethodHS256, k.secretOther, claims(), nil), "signature"},
		{"ES384 signature under an ES256 header", all, parts[0] + "." + parts[1] + "." + strings.Split(sign(t, jwt.SigningMethodES384, k.p384.private, claims(), nil), ".")[2], "signature"},
		{"tampered payload", all, parts[0] + "." + enc([]byte(`{"sub":"mallory","scope":"plants:write","exp":1900000300}`)) + "." + parts[2], "signature"},
		{"tampered signature", all, parts[0] + "." + parts[1] + "." + enc(make([]byte, 256)), "signature"},
		{"expired 31s ago", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["exp"] = testNow.Add(-31 * time.Second).Unix() }), nil), "expired"},
		{"nbf 31s ahead", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["nbf"] = testNow.Add(31 * time.Second).Unix() }), nil), "not_yet_valid"},
		{"iat 31s ahead", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["iat"] = testNow.Add(31 * time.Second).Unix() }), nil), "not_yet_valid"},
		{"exp missing", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { delete(c, "exp") }), nil), "claims"},
		{"exp a string", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }), nil), "malformed"},
		{"exp a number in a string", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["exp"] = "1900000300" }), nil), "malformed"},
		{"nbf a number in a string", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["nbf"] = "1" }), nil), "malformed"},
		{"iat a number in a string", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["iat"] = "1" }), nil), "malformed"},
		{"exp past the year 9999", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["exp"] = 1e20 }), nil), "malformed"},
		{"nbf past the year 9999", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["nbf"] = 1e20 }), nil), "malformed"},
		{"iat before the year 0", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["iat"] = -1e20 }), nil), "malformed"},
		{"exp null", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["exp"] = nil }), nil), "claims"},
		{"scope a number", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["scope"] = 7 }), nil), "claims"},
		{"scp an object", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, edited(func(c jwt.MapClaims) { c["scp"] = map[string]int{"a": 1} }), nil), "claims"},
		{"iss wrong", withIssAud, sign(t, jwt.SigningMethodRS256, k.rsa.private, issAud("https://other.example", "plantstore"), nil), "issuer"},
		{"iss missing", withIssAud, sign(t, jwt.SigningMethodRS256, k.rsa.private, issAud("", "plantstore"), nil), "issuer"},
		{"aud wrong", withIssAud, sign(t, jwt.SigningMethodRS256, k.rsa.private, issAud("https://issuer.example", "other"), nil), "audience"},
		{"aud list without ours", withIssAud, sign(t, jwt.SigningMethodRS256, k.rsa.private, issAud("https://issuer.example", []string{"a", "b"}), nil), "audience"},
		{"aud missing", withIssAud, sign(t, jwt.SigningMethodRS256, k.rsa.private, issAud("https://issuer.example", nil), nil), "audience"},
		{"crit header", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, claims(), map[string]any{"crit": []string{"b64"}, "b64": false}), "malformed"},
		{"kid not a string", all, sign(t, jwt.SigningMethodRS256, k.rsa.private, claims(), map[string]any{"kid": 7}), "malformed"},
		{"empty", all, "", "malformed"},
		{"one segment", all, "abc", "malformed"},
		{"two segments", all, parts[0] + "." + parts[1], "malformed"},
		{"four segments", all, valid + ".x", "malformed"},
		{"garbage base64", all, "!!!.@@@.###", "malformed"},
		{"header not JSON", all, enc([]byte("not json")) + "." + parts[1] + "." + parts[2], "malformed"},
		{"payload not JSON", all, parts[0] + "." + enc([]byte("[1,2")) + "." + parts[2], "malformed"},
		{"payload not an object", all, parts[0] + "." + enc([]byte(`"text"`)) + "." + parts[2], "malformed"},
		{"padded base64", all, parts[0] + "=." + parts[1] + "." + parts[2], "malformed"},
		{"bearer prefix left in", all, "Bearer " + valid, "malformed"},
		{"too large", all, strings.Repeat("a", maxTokenBytes+1), "too_large"},
		{"too large and signed", all, sign(t, jwt.SigningMethodHS256, k.secret, edited(func(c jwt.MapClaims) { c["pad"] = strings.Repeat("x", maxTokenBytes) }), nil), "too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newVerifier(t, tt.cfg).Verify(context.Background(), tt.token)
			if err == nil {
				t.Fatalf("Verify accepted the token as %+v", p)
			}
			wantRefused(t, err, tt.reason)
		})
	}
}

func pemDER(t testing.TB, p []byte) []byte {
	t.Helper()
	der := strings.TrimSpace(string(p))
	der = strings.TrimPrefix(der, "-----BEGIN PUBLIC KEY-----")
	der = strings.TrimSuffix(der, "-----END PUBLIC KEY-----")
	b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(der, "\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyAcceptsTheLargestAllowedToken(t *testing.T) {
	k := fixtures(t)
	v := newVerifier(t, staticConfig(t))
	var token string
	for n := maxTokenBytes; n > 0; n-- {
		c := claims()
		c["pad"] = strings.Repeat("x", n)
		token = sign(t, jwt.SigningMethodHS256, k.secret, c, nil)
		if len(token) <= maxTokenBytes {
			break
		}
		n -= (len(token) - maxTokenBytes) * 3 / 4 // skip ahead; base64 is 4/3 longer
	}
	if len(token) < maxTokenBytes-4 {
		t.Fatalf("token of %d bytes is not near the limit", len(token))
	}
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatalf("Verify of a %d-byte token: %v", len(token), err)
	}
}

func TestVerifyChecksIssuerAndAudienceWhenConfigured(t *testing.T) {
	k := fixtures(t)
	cfg := staticConfig(t)
	cfg.Issuer, cfg.Audience = "https://issuer.example", "plantstore"
	v := newVerifier(t, cfg)
	for name, aud := range map[string]any{"string": "plantstore", "list": []string{"other", "plantstore"}} {
		t.Run(name, func(t *testing.T) {
			c := claims()
			c["iss"], c["aud"] = "https://issuer.example", aud
			if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodEdDSA, k.ed.private, c, nil)); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}

	unchecked := newVerifier(t, staticConfig(t))
	c := claims()
	c["iss"], c["aud"] = "https://anyone.example", "anything"
	if _, err := unchecked.Verify(context.Background(), sign(t, jwt.SigningMethodEdDSA, k.ed.private, c, nil)); err != nil {
		t.Fatalf("Verify without iss/aud configured: %v", err)
	}
}

func TestVerifyUsesRealTimeByDefault(t *testing.T) {
	k := fixtures(t)
	v, err := New(context.Background(), Config{SecretFile: writeFile(t, "secret", k.secret)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	// claims() are at testNow, years from now: refused by the real clock.
	_, err = v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, k.secret, claims(), nil))
	wantRefused(t, err, "not_yet_valid")
}
