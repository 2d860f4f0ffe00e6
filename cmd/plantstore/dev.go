package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/plantstore/plantstore/adapters/jwtauth"
)

// devSecretPath is where development mode keeps its HS256 secret, relative
// to the working directory.
const devSecretPath = ".dev/jwt-secret"

// devTokenTTL is how long the token printed in development mode is valid.
const devTokenTTL = 24 * time.Hour

// devSetup is development mode's secret and the token it prints.
type devSetup struct {
	token string
}

// prepareDev creates the development secret that prepare pointed cfg at,
// on first use, and mints a token for it.
func prepareDev(cfg *config) (*devSetup, error) {
	if _, err := os.Stat(devSecretPath); errors.Is(err, fs.ErrNotExist) {
		if err := writeDevSecret(devSecretPath); err != nil {
			return nil, fmt.Errorf("development secret: %w", err)
		}
	}
	secret, err := jwtauth.ReadSecretFile(devSecretPath)
	if err != nil {
		return nil, fmt.Errorf("development secret: %w", err)
	}
	var scopes []string
	for _, s := range []scope{cfg.Scopes.Read, cfg.Scopes.Write} {
		if s != "" {
			scopes = append(scopes, string(s))
		}
	}
	tok, err := jwtauth.MintHS256(secret, "dev", scopes, devTokenTTL, cfg.Auth.Issuer, cfg.Auth.Audience)
	if err != nil {
		return nil, err
	}
	return &devSetup{token: tok}, nil
}

func writeDevSecret(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	return os.WriteFile(path, []byte(base64.RawURLEncoding.EncodeToString(b[:])+"\n"), 0o600)
}

// announce prints the token, the address of the API reference page and a
// curl line that creates a plant.
func (d *devSetup) announce(w io.Writer, api net.Addr) {
	base := "http://" + reachable(api)
	fmt.Fprintf(w, `
Development mode: tokens are signed with %s (do not use in production).
Token (valid %s):
  %s

API reference (paste the token under Authorize, then try the operations):
  %s/docs

Create a plant:
  curl -sS -X POST %s/plants -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -d '{"id":1,"name":"Monstera deliciosa","tag":"tropical"}'

`, devSecretPath, devTokenTTL, d.token, base, base, d.token)
}

// reachable turns a listening address into one a local client can dial:
// a wildcard host becomes localhost.
func reachable(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}
