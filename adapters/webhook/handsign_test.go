package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// handSigner is the signer the Standard Webhooks library replaced: a pool of
// HMAC states keyed once. It is kept only to measure the library against it
// and to hold the library to its bytes.
type handSigner struct{ pool sync.Pool }

func newHandSigner(key []byte) *handSigner {
	s := &handSigner{}
	s.pool.New = func() any { return &handState{mac: hmac.New(sha256.New, key), buf: make([]byte, 0, 128)} }
	return s
}

type handState struct {
	mac hash.Hash
	buf []byte
}

func (h *handSigner) appendSignature(dst []byte, id string, timestamp, body []byte) []byte {
	s := h.pool.Get().(*handState)
	s.buf = append(append(append(append(s.buf[:0], id...), '.'), timestamp...), '.')
	s.mac.Reset()
	s.mac.Write(s.buf)
	s.mac.Write(body)
	s.buf = s.mac.Sum(s.buf[:0])
	dst = base64.StdEncoding.AppendEncode(append(dst, "v1,"...), s.buf)
	h.pool.Put(s)
	return dst
}

func (h *handSigner) sign(id string, at time.Time, body []byte) string {
	var ts [20]byte
	var sig [64]byte
	return string(h.appendSignature(sig[:0], id, strconv.AppendInt(ts[:0], at.Unix(), 10), body))
}

// verify is the hand-written check of the signatures that Verify hands to
// the library now; the timestamp's checks, which stayed, are left out.
func (h *handSigner) verify(header http.Header, body []byte) bool {
	var scratch [64]byte
	want := h.appendSignature(scratch[:0], header.Get(HeaderID), []byte(header.Get(HeaderTimestamp)), body)
	match := false
	for _, line := range header.Values(HeaderSignature) {
		for sig := range strings.FieldsSeq(line) {
			if hmac.Equal([]byte(sig), want) {
				match = true
			}
		}
	}
	return match
}

func TestLibrarySignsAsTheHandWrittenSigner(t *testing.T) {
	hand := newHandSigner(testKey)
	secret := testSecret(t)
	for _, body := range []string{"", "{}", `{"id":7,"name":"Fern","tag":"green"}`, strings.Repeat("🌿", 300)} {
		for _, id := range []string{"evt_1_0", "msg_p5jXN8AQM9LWM0D4loKWxJek", ""} {
			at := time.Unix(1_750_000_000, 0)
			if got, want := Sign(secret, id, at, []byte(body)), hand.sign(id, at, []byte(body)); got != want {
				t.Errorf("id %q, body %q: library %s, hand-written %s", id, body, got, want)
			}
		}
	}
}

// BenchmarkSignature is signing and verifying one message with the library
// (impl=library) beside the hand-written code it replaced (impl=hand), in
// the same run. Compare with benchstat -col /impl over -count 6.
func BenchmarkSignature(b *testing.B) {
	secret := testSecret(b)
	hand := newHandSigner(testKey)
	body := []byte(`{"id":7,"name":"Fern","tag":"green"}`)
	at := time.Unix(1_750_000_000, 0)
	header := http.Header{}
	header.Set(HeaderID, "evt_1_0")
	header.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	header.Set(HeaderSignature, Sign(secret, "evt_1_0", at, body))
	b.Run("op=sign/impl=library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Sign(secret, "evt_1_0", at, body)
		}
	})
	b.Run("op=sign/impl=hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			hand.sign("evt_1_0", at, body)
		}
	})
	b.Run("op=verify/impl=library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := Verify(secret, header, body, at); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=verify/impl=hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseUnix(header.Get(HeaderTimestamp)); err != nil || !hand.verify(header, body) {
				b.Fatal("refused")
			}
		}
	})
}
