package webhook

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Tolerance is how far a message's timestamp may lie from the receiver's
// clock, either way, as the Standard Webhooks specification recommends: a
// captured message cannot be replayed later than that.
const Tolerance = 5 * time.Minute

// Why Verify refuses a message; test with errors.Is.
var (
	ErrMissingHeader = errors.New("webhook-id, webhook-timestamp or webhook-signature is missing")
	ErrSignature     = errors.New("no webhook-signature matches")
	ErrTimestamp     = errors.New("webhook-timestamp is out of tolerance")
)

// Verify checks a received message against secret: one of the
// space-separated "v1," signatures in webhook-signature must be the
// message's, compared in constant time, and webhook-timestamp must lie
// within Tolerance of now. The signature is checked first, so ErrTimestamp
// means an authentic message that is stale, or a clock that is off.
func Verify(secret Secret, header http.Header, body []byte, now time.Time) error {
	_, err := verify(secret, header, body, now)
	return err
}

// verify is Verify that also returns the message's timestamp.
func verify(secret Secret, header http.Header, body []byte, now time.Time) (time.Time, error) {
	id, stamp := header.Get(HeaderID), header.Get(HeaderTimestamp)
	signatures := header.Values(HeaderSignature)
	if id == "" || stamp == "" || len(signatures) == 0 {
		return time.Time{}, ErrMissingHeader
	}
	if secret.k == nil {
		return time.Time{}, errors.New("no secret to verify with")
	}
	unix, err := parseUnix(stamp)
	if err != nil {
		return time.Time{}, err
	}
	var scratch [64]byte
	want := secret.k.appendSignature(scratch[:0], id, []byte(stamp), body)
	if !anyMatches(signatures, want) {
		return time.Time{}, ErrSignature
	}
	sent := time.Unix(unix, 0)
	switch age := now.Sub(sent); {
	case age > Tolerance:
		return sent, fmt.Errorf("%w: the message is %s old", ErrTimestamp, age.Round(time.Second))
	case age < -Tolerance:
		return sent, fmt.Errorf("%w: the message is %s ahead of this clock", ErrTimestamp, (-age).Round(time.Second))
	}
	return sent, nil
}

// anyMatches reports whether one of the space-separated signatures in any
// of the header's lines is want, comparing each in constant time.
func anyMatches(lines []string, want []byte) bool {
	match := false
	for _, line := range lines {
		for sig := range strings.FieldsSeq(line) {
			if hmac.Equal([]byte(sig), want) {
				match = true
			}
		}
	}
	return match
}

// parseUnix reads webhook-timestamp: decimal Unix seconds, digits only.
func parseUnix(s string) (int64, error) {
	unix, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s[0] < '0' || s[0] > '9' { // ParseInt takes a sign
		return 0, fmt.Errorf("%w: it is not Unix seconds", ErrTimestamp)
	}
	return unix, nil
}
