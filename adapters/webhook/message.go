package webhook

import (
	"time"
)

// The Standard Webhooks headers, in Go's canonical form so that Header.Get
// finds them; HTTP header names are case-insensitive.
const (
	HeaderID        = "Webhook-Id"
	HeaderTimestamp = "Webhook-Timestamp"
	HeaderSignature = "Webhook-Signature"
)

// Sign returns the webhook-signature header value for a message with this
// id, timestamp (whole Unix seconds) and body: "v1," and the standard base64
// of HMAC-SHA256 over "id.timestamp.body". The Sender signs with it; tests
// and tools use it to forge or replay messages. The Standard Webhooks
// library signs. The zero Secret panics.
func Sign(secret Secret, id string, timestamp time.Time, body []byte) string {
	// The library's Sign never fails: its error is always nil.
	sig, _ := secret.k.webhook().Sign(id, timestamp, body)
	return sig
}
