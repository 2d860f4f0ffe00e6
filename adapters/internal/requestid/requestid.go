// Package requestid gives every response of the service's listeners an
// X-Request-ID: the client's, when it sent a short token of safe characters,
// or a new one, unique across replicas.
package requestid

import (
	"crypto/rand"
	"encoding/base32"
	"net/http"
	"strconv"
	"sync/atomic"
)

// Header is the request and response header that carries the id.
const Header = "X-Request-ID"

// headerKey is the header's canonical key, for direct map access.
var headerKey = http.CanonicalHeaderKey(Header)

// maxLength bounds a client's id that is echoed back.
const maxLength = 128

// sane reports whether a client's id is a short token of safe characters
// that may be echoed into headers and logs as it is.
func sane(id string) bool {
	if id == "" || len(id) > maxLength {
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

// Source mints ids: a random per-source prefix and a counter, unique across
// replicas without spending randomness on every request.
type Source struct {
	prefix string
	next   atomic.Uint64
}

// NewSource returns a Source with a fresh random prefix.
func NewSource() *Source {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return &Source{prefix: base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]) + "-"}
}

// New returns the next id: unique across Sources as long as their random
// 50-bit prefixes differ, which they practically always do.
func (s *Source) New() string {
	var buf [40]byte
	b := append(buf[:0], s.prefix...)
	b = strconv.AppendUint(b, s.next.Add(1), 10)
	return string(b)
}

// Assign sets the response's id, the client's when it is sane, and returns it.
func (s *Source) Assign(w http.ResponseWriter, r *http.Request) string {
	id := r.Header.Get(Header)
	if !sane(id) {
		id = s.New()
	}
	w.Header()[headerKey] = []string{id}
	return id
}
