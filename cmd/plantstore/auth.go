package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/jwtauth"
	"github.com/plantstore/plantstore/application"
)

// authSettings are the token verifier's: its keys and the claims it needs.
type authSettings struct {
	SecretFile    string        `flag:"jwt-secret-file" help:"file holding the HS256/384/512 secret (a trailing newline is ignored)"`
	PublicKeyFile string        `flag:"jwt-public-key-file" help:"PEM file with one or more public keys (RSA, EC, Ed25519)"`
	JWKSURL       httpURL       `flag:"jwks-url" help:"JWKS endpoint whose keys verify tokens by kid"`
	JWKSRefresh   time.Duration `flag:"jwks-refresh" default:"1h" help:"how often the JWKS is refreshed in the background"`
	Issuer        string        `flag:"jwt-issuer" help:"required iss claim, when set"`
	Audience      string        `flag:"jwt-audience" help:"required aud claim, when set"`
}

// hasKey reports whether any token verification key is configured.
func (s *authSettings) hasKey() bool {
	return s.SecretFile != "" || s.PublicKeyFile != "" || s.JWKSURL != ""
}

// keySourceSettings names the setting behind each key source of
// jwtauth.Config, for the start-up error.
var keySourceSettings = map[string]string{
	"SecretFile":    "PLANTSTORE_JWT_SECRET_FILE",
	"PublicKeyFile": "PLANTSTORE_JWT_PUBLIC_KEY_FILE",
	"JWKSURL":       "PLANTSTORE_JWKS_URL",
}

// authModule verifies bearer tokens with the configured keys.
var authModule = fx.Module("jwtauth",
	fx.Provide(fx.Annotate(openVerifier, fx.As(new(application.TokenVerifier)))),
)

func openVerifier(lc fx.Lifecycle, s *authSettings, log *slog.Logger, reg prometheus.Registerer) (*jwtauth.Verifier, error) {
	v, err := jwtauth.New(context.Background(), jwtauth.Config{
		SecretFile:    s.SecretFile,
		PublicKeyFile: s.PublicKeyFile,
		JWKSURL:       string(s.JWKSURL),
		JWKSRefresh:   s.JWKSRefresh,
		Issuer:        s.Issuer,
		Audience:      s.Audience,
	}, jwtauth.WithLogger(log), jwtauth.WithRegisterer(reg))
	var source *jwtauth.KeySourceError
	if errors.As(err, &source) {
		return nil, fmt.Errorf("%s: %w", keySourceSettings[source.Field], err)
	}
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(v.Close))
	return v, nil
}
