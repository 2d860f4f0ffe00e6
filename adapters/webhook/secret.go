package webhook

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Key lengths the Standard Webhooks specification asks of a symmetric secret.
const (
	MinKeyBytes = 24
	MaxKeyBytes = 64
)

const secretPrefix = "whsec_"

// redacted is what every way of printing a Secret shows.
const redacted = "whsec_[redacted]"

// Secret is the key that signs and verifies webhook messages. The zero Secret
// holds no key and signs nothing; build one with ParseSecret or
// ReadSecretFile.
//
// No way of printing a Secret shows the key: String, GoString, every fmt verb
// and slog print a fixed placeholder. fmt cannot call those methods on a
// Secret in an unexported field of a struct it prints; there it shows the
// fields of key, and the key bytes are in none of them: they are inside the
// Standard Webhooks library's signer, which only a function returns, and fmt
// prints a function as an address with every verb. (A pointer to the signer
// would not do: fmt shows what a pointer points to when a verb does not suit
// it, %s or %q.)
type Secret struct{ k *key }

// key holds the library's signer out of fmt's reach.
type key struct {
	webhook func() *standardwebhooks.Webhook
}

// ParseSecret parses the Standard Webhooks form whsec_<base64>: the prefix,
// then the key in standard base64 with padding. The text is taken exactly:
// white space anywhere, a trailing line ending included, is refused (see
// ReadSecretFile, which strips it). The key must hold MinKeyBytes to
// MaxKeyBytes bytes. Error messages never repeat the secret.
func ParseSecret(s string) (Secret, error) {
	if s == "" {
		return Secret{}, errors.New("the secret is empty")
	}
	encoded, ok := strings.CutPrefix(s, secretPrefix)
	if !ok {
		return Secret{}, errors.New(`the secret does not start with "whsec_"`)
	}
	if encoded == "" {
		return Secret{}, errors.New(`the secret has no key after "whsec_"`)
	}
	// The decoder skips line endings inside its input; refusing all white
	// space keeps the key exactly what was written.
	if strings.ContainsAny(encoded, " \t\r\n\v\f") {
		return Secret{}, errors.New("the secret contains white space")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(encoded)
	if err != nil {
		return Secret{}, errors.New(`the key after "whsec_" is not valid standard base64`)
	}
	switch {
	case len(raw) < MinKeyBytes:
		return Secret{}, errors.New("the key is " + strconv.Itoa(len(raw)) + " bytes long; at least " + strconv.Itoa(MinKeyBytes) + " are needed")
	case len(raw) > MaxKeyBytes:
		return Secret{}, errors.New("the key is " + strconv.Itoa(len(raw)) + " bytes long; at most " + strconv.Itoa(MaxKeyBytes) + " are allowed")
	}
	// The library's own NewWebhook is lax (no prefix needed, any length,
	// line endings skipped); it gets only a key this function accepted.
	wh, err := standardwebhooks.NewWebhookRaw(raw)
	if err != nil {
		return Secret{}, errors.New("the key cannot sign")
	}
	return Secret{k: &key{webhook: func() *standardwebhooks.Webhook { return wh }}}, nil
}

// ReadSecretFile reads a secret in the whsec_ form from path. White space
// around it, such as the line ending that editors and echo add, is dropped:
// base64 never contains any. Errors name the file, never its content.
func ReadSecretFile(path string) (Secret, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Secret{}, fmt.Errorf("read webhook secret: %w", err)
	}
	s, err := ParseSecret(strings.TrimSpace(string(data)))
	if err != nil {
		return Secret{}, fmt.Errorf("secret file %s: %w", path, err)
	}
	return s, nil
}

// String returns a placeholder, never the key.
func (Secret) String() string { return redacted }

// GoString returns a placeholder for %#v, never the key.
func (Secret) GoString() string { return redacted }

// Format prints the placeholder for every verb, %x and %d included.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// LogValue keeps the key out of structured logs.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText keeps the key out of JSON, YAML and the like.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
