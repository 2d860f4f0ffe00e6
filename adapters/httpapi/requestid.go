package httpapi

import (
	"crypto/rand"
	"encoding/base32"
	"net/http"
	"strconv"
	"sync/atomic"
)

const requestIDHeader = "X-Request-ID"

// requestIDKey is the header's canonical key, for direct map access.
var requestIDKey = http.CanonicalHeaderKey(requestIDHeader)

// maxRequestIDLength bounds a client's request id that is echoed back.
const maxRequestIDLength = 128

// saneRequestID reports whether a client's X-Request-ID is a short token of
// safe characters that may be echoed into headers and logs as it is.
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == ':' || c == '/' || c == '+' || c == '=') {
			return false
		}
	}
	return true
}

// requestIDs mints request ids: a random per-process prefix and a counter,
// unique across replicas without spending randomness on every request.
type requestIDs struct {
	prefix string
	next   atomic.Uint64
}

func newRequestIDs() *requestIDs {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return &requestIDs{prefix: base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]) + "-"}
}

func (g *requestIDs) new() string {
	var buf [40]byte
	b := append(buf[:0], g.prefix...)
	b = strconv.AppendUint(b, g.next.Add(1), 10)
	return string(b)
}
