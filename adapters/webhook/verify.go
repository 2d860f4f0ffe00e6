package webhook

import (
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
// space-separated "v1," signatures in webhook-signature, on one line or
// several, must be the message's, and webhook-timestamp must lie within
// Tolerance of now. The Standard Webhooks library compares the signatures
// (in constant time); this function adds what it leaves out: a timestamp of
// digits only, signatures on several header lines, a clock passed in, and
// the order of the checks. The signature is checked first, so ErrTimestamp
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
	// The library reads one line of webhook-signature, split at spaces; a
	// header may carry the list on several lines, split by any white space.
	// Its own clock is not this function's now, so the timestamp is checked
	// below instead.
	list := candidates(signatures)
	if list == "" {
		return time.Time{}, ErrSignature
	}
	message := http.Header{
		HeaderID:        {id},
		HeaderTimestamp: {stamp},
		HeaderSignature: {list},
	}
	if err := secret.k.webhook().VerifyIgnoringTimestamp(body, message); err != nil {
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

// candidates is every signature of the header's lines, one space between
// each. A signature is a version, a comma and base64, which has no comma:
// the library would compare only what lies between a second comma and the
// first, so such a field is left out, as it can match nothing.
func candidates(lines []string) string {
	var b strings.Builder
	for _, line := range lines {
		for sig := range strings.FieldsSeq(line) {
			if strings.Count(sig, ",") != 1 {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(sig)
		}
	}
	return b.String()
}

// parseUnix reads webhook-timestamp: decimal Unix seconds, digits only.
// The library's own parsing takes a sign.
func parseUnix(s string) (int64, error) {
	unix, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s[0] < '0' || s[0] > '9' { // ParseInt takes a sign
		return 0, fmt.Errorf("%w: it is not Unix seconds", ErrTimestamp)
	}
	return unix, nil
}
