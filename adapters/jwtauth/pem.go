package jwtauth

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// readPublicKeys loads every public key in the PEM file at path.
func readPublicKeys(path string) ([]publicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read public key file: %w", err)
	}
	keys, err := parsePublicKeys(data)
	if err != nil {
		return nil, fmt.Errorf("public key file %s: %w", path, err)
	}
	return keys, nil
}

// parsePublicKeys accepts "PUBLIC KEY" (PKIX), "RSA PUBLIC KEY" (PKCS #1) and
// "CERTIFICATE" blocks. A certificate only carries its key here: its validity
// dates and chain are not checked, as the key was configured by hand. Private
// keys are refused rather than silently reduced to their public half, so that
// a signing key does not end up on the verifying side by mistake.
func parsePublicKeys(data []byte) ([]publicKey, error) {
	var keys []publicKey
	for n := 1; ; n++ {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		var (
			key any
			err error
		)
		switch block.Type {
		case "PUBLIC KEY":
			key, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			key, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case "CERTIFICATE":
			var cert *x509.Certificate
			if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
				key = cert.PublicKey
			}
		case "EC PARAMETERS":
			continue // written by some tools next to an EC key; carries no key
		default:
			if strings.Contains(block.Type, "PRIVATE KEY") {
				return nil, fmt.Errorf("PEM block %d is a private key; give only public keys", n)
			}
			return nil, fmt.Errorf("PEM block %d has unsupported type %q", n, block.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("PEM block %d (%s): %w", n, block.Type, err)
		}
		k, err := newPublicKey("", key, "")
		if err != nil {
			return nil, fmt.Errorf("PEM block %d (%s): %w", n, block.Type, err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("no PEM-encoded public key found")
	}
	return keys, nil
}
