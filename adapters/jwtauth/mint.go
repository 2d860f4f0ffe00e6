package jwtauth

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MintHS256 signs a token for development and tests (`plantstore token`,
// `serve --dev`): subject as sub, scopes as the space-separated scope claim,
// valid from now for ttl. issuer and audience are set when not empty.
func MintHS256(secret []byte, subject string, scopes []string, ttl time.Duration, issuer, audience string) (string, error) {
	if err := checkSecret(secret); err != nil {
		return "", err
	}
	if ttl <= 0 {
		return "", fmt.Errorf("token lifetime %s is not positive", ttl)
	}
	for _, s := range scopes {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' }) {
			return "", errors.New("a scope must be non-empty and hold no white space or control characters")
		}
	}
	now := time.Now().Truncate(time.Second)
	claims := mintClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   subject,
			Issuer:    issuer,
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
		Scope: strings.Join(scopes, " "),
	}
	if audience != "" {
		claims.Audience = jwt.ClaimStrings{audience}
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}

type mintClaims struct {
	jwt.RegisteredClaims
	Scope string `json:"scope,omitempty"`
}
