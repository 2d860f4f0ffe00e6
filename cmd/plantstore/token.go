package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/plantstore/plantstore/adapters/jwtauth"
)

// token mints an HS256 token signed with the configured secret (or, with
// --dev, the local development secret) and prints it.
func token(args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) error {
	env := func(name string) string { v, _ := getenv(name); return v }
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	secretFile := fs.String("jwt-secret-file", "", "file holding the HS256 secret")
	dev := fs.Bool("dev", false, "sign with the local development secret that serve --dev uses")
	subject := fs.String("subject", "dev", "the token's sub claim, recorded as the creator of plants")
	scope := fs.String("scope", defaultScope(env), "space-separated scopes granted by the token; by default the read and write scopes serve takes (PLANTSTORE_READ_SCOPE, PLANTSTORE_REQUIRED_SCOPE)")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	issuer := fs.String("issuer", "", "iss claim")
	audience := fs.String("audience", "", "aud claim")
	variables := map[string]string{
		"jwt-secret-file": "PLANTSTORE_JWT_SECRET_FILE",
		"issuer":          "PLANTSTORE_JWT_ISSUER",
		"audience":        "PLANTSTORE_JWT_AUDIENCE",
	}
	fs.Usage = func() {
		commandUsage(fs.Output(), "token", "Mints an HS256 token for development and tests.", fs, variables)
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := fromVariables(fs, variables, getenv); err != nil {
		return err
	}
	if *dev && *secretFile == "" {
		*secretFile = devSecretPath
	}
	if *secretFile == "" {
		return errors.New("token: set --jwt-secret-file (or PLANTSTORE_JWT_SECRET_FILE), or use --dev")
	}
	if *ttl <= 0 {
		return errors.New("token: --ttl must be positive")
	}
	secret, err := jwtauth.ReadSecretFile(*secretFile)
	if err != nil {
		return err
	}
	tok, err := jwtauth.MintHS256(secret, *subject, strings.Fields(*scope), *ttl, *issuer, *audience)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

// defaultScope grants what the service requires by default, or as
// configured: the read scope and the write scope.
func defaultScope(env func(string) string) string {
	return strings.TrimSpace(cmp.Or(env("PLANTSTORE_READ_SCOPE"), "plants:read") + " " +
		cmp.Or(env("PLANTSTORE_REQUIRED_SCOPE"), "plants:write"))
}
