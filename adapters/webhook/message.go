package webhook

import (
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/domain"
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

// appendPlant appends the event body: the plant as reads answer it (id,
// name, and tag only when it is set), its text exactly as stored, through
// the API's own transport type: a receiver gets the bytes a read of the
// plant would give.
func appendPlant(buf []byte, p domain.Plant) []byte { return plantjson.AppendItem(buf, p) }

// bodySize is room for a plant's body with a little escaping, so that
// appendPlant rarely grows its buffer.
func bodySize(p domain.Plant) int {
	return 48 + len(p.Name().String()) + len(p.Tag().String())
}
