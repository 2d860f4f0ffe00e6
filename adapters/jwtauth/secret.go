package jwtauth

import (
	"bytes"
	"errors"
	"fmt"
	"os"
)

// MinSecretBytes is the shortest HMAC secret accepted. RFC 7518 asks for a key
// at least as long as the hash output; 32 bytes covers HS256.
const MinSecretBytes = 32

// ReadSecretFile reads an HMAC secret from path. The secret is the file's
// content less one trailing line ending ("\n" or "\r\n"), which editors and
// `echo` add; any other byte, white space included, is part of the secret.
// An empty secret or one shorter than MinSecretBytes is refused.
func ReadSecretFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read secret file: %w", err)
	}
	secret := trimLineEnding(data)
	if err := checkSecret(secret); err != nil {
		return nil, fmt.Errorf("secret file %s: %w", path, err)
	}
	return secret, nil
}

func trimLineEnding(b []byte) []byte {
	if rest, ok := bytes.CutSuffix(b, []byte("\r\n")); ok {
		return rest
	}
	rest, _ := bytes.CutSuffix(b, []byte("\n"))
	return rest
}

func checkSecret(secret []byte) error {
	switch {
	case len(secret) == 0:
		return errors.New("the secret is empty")
	case len(secret) < MinSecretBytes:
		return fmt.Errorf("the secret is %d bytes long; HMAC signing needs at least %d", len(secret), MinSecretBytes)
	}
	return nil
}
