package jwtauth

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

func TestReadSecretFileTrimsOneLineEnding(t *testing.T) {
	base := strings.Repeat("s", 40)
	tests := []struct {
		name, content, want string
	}{
		{"no line ending", base, base},
		{"newline", base + "\n", base},
		{"CRLF", base + "\r\n", base},
		{"two newlines keep one", base + "\n\n", base + "\n"},
		{"trailing space kept", base + " ", base + " "},
		{"trailing space before newline kept", base + " \n", base + " "},
		{"lone CR kept", base + "\r", base + "\r"},
		{"leading newline kept", "\n" + base, "\n" + base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadSecretFile(writeFile(t, "secret", []byte(tt.content)))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("secret = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadSecretFileRefuses(t *testing.T) {
	tests := []struct {
		name, content, wantErr string
	}{
		{"empty file", "", "empty"},
		{"only a newline", "\n", "empty"},
		{"only CRLF", "\r\n", "empty"},
		{"31 bytes", strings.Repeat("s", 31) + "\n", "at least 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadSecretFile(writeFile(t, "secret", []byte(tt.content)))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		if _, err := ReadSecretFile(filepath.Join(t.TempDir(), "nope")); err == nil {
			t.Fatal("no error for a missing file")
		}
	})
	t.Run("exactly 32 bytes accepted", func(t *testing.T) {
		if _, err := ReadSecretFile(writeFile(t, "secret", bytes.Repeat([]byte("s"), 32))); err != nil {
			t.Fatal(err)
		}
	})
}

func TestVerifyUsesTheTrimmedSecret(t *testing.T) {
	secret := []byte(strings.Repeat("k", 40))
	v := newVerifier(t, Config{SecretFile: writeFile(t, "secret", append(append([]byte{}, secret...), "\r\n"...))})
	if _, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, secret, claims(), nil)); err != nil {
		t.Fatalf("token signed with the trimmed secret: %v", err)
	}
	withNewline := append(append([]byte{}, secret...), "\r\n"...)
	_, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, withNewline, claims(), nil))
	wantRefused(t, err, "signature")
}
