package webhook

import (
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

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
// and tools use it to forge or replay messages. The zero Secret panics.
func Sign(secret Secret, id string, timestamp time.Time, body []byte) string {
	var ts [20]byte
	var sig [64]byte
	return string(secret.k.appendSignature(sig[:0], id, strconv.AppendInt(ts[:0], timestamp.Unix(), 10), body))
}

// appendPlant appends the event body: the plant in NewPlant's shape, as
// reads answer it (id, name, and tag only when it is set), its text exactly
// as stored. Only what JSON requires is escaped (quote, backslash, control
// characters), not HTML characters: a receiver gets the bytes a read of the
// plant would give.
func appendPlant(buf []byte, p domain.Plant) []byte {
	buf = append(buf, `{"id":`...)
	buf = strconv.AppendInt(buf, int64(p.ID()), 10)
	buf = append(buf, `,"name":`...)
	buf, _ = jsontext.AppendQuote(buf, p.Name().String())
	if t := p.Tag(); t.IsSet() {
		buf = append(buf, `,"tag":`...)
		buf, _ = jsontext.AppendQuote(buf, t.String())
	}
	return append(buf, '}')
}

// bodySize is room for a plant's body with a little escaping, so that
// appendPlant rarely grows its buffer.
func bodySize(p domain.Plant) int {
	return 48 + len(p.Name().String()) + len(p.Tag().String())
}
