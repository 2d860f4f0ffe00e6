package httpapi

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/docs"
	"github.com/plantstore/plantstore/domain"
)

// BenchmarkRequestPath is one create through the real router with real token
// verification per algorithm, decoding, validation, the use case, the
// in-memory store (a replay after the first request), encoding and the access
// log.
func BenchmarkRequestPath(b *testing.B) {
	keys := jwttest.New(b)
	store := memory.New()
	deps := useCases(store, everyScope)
	deps.Verifier, deps.Log = keys.Verifier(b), slog.New(slog.NewJSONHandler(io.Discard, nil))
	api, err := New(Config{OpenAPI: docs.OpenAPI}, deps)
	if err != nil {
		b.Fatal(err)
	}
	claims := jwt.MapClaims{"sub": "bench", "scope": "plants:write", "exp": time.Now().Add(time.Hour).Unix()}
	body := []byte(`{"id":12345,"name":"Monstera deliciosa","tag":"tropical"}`)
	for _, alg := range []struct {
		name   string
		method jwt.SigningMethod
		key    any
	}{
		{"HS256", jwt.SigningMethodHS256, keys.Secret},
		{"RS256", jwt.SigningMethodRS256, keys.RSA},
		{"ES256", jwt.SigningMethodES256, keys.EC},
		{"EdDSA", jwt.SigningMethodEdDSA, keys.Ed},
	} {
		req := httptest.NewRequest(http.MethodPost, "/plants", nil)
		req.Header.Set("Authorization", "Bearer "+keys.Sign(b, alg.method, alg.key, claims))
		req.Header.Set("Content-Type", "application/json")
		b.Run(alg.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				r := *req
				r.Body = io.NopCloser(bytes.NewReader(body))
				clear(w.h)
				api.ServeHTTP(w, &r)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// BenchmarkDecodeNewPlant is the strict decoder alone; the whole request path
// is BenchmarkRequestPath.
func BenchmarkDecodeNewPlant(b *testing.B) {
	body := []byte(`{"id":12345,"name":"Monstera deliciosa","tag":"tropical"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := decodeNewPlant(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendJSONString is the quoting of the strings an answer holds:
// a plant's name, an error message, and text that needs escapes.
func BenchmarkAppendJSONString(b *testing.B) {
	for _, s := range []struct{ name, text string }{
		{"name", "Monstera deliciosa"},
		{"message", "name: must not be empty; tag: must be at most 64 characters"},
		{"escapes", "a \"quoted\" C:\\path\nand\ta \x01 🌵"},
	} {
		buf := make([]byte, 0, 256)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = appendJSONString(buf[:0], s.text)
			}
		})
	}
}

// BenchmarkAnswers is a request whose answer is a plant's JSON, through the
// router with the memory store: a create (a replay of a stored plant, whose
// answer is the Plant body), a read, a read answered 304 by its ETag, a
// change, and a list of 100. It measures what the
// plant's encoder costs a whole request; the token check is a stub.
func BenchmarkAnswers(b *testing.B) {
	store := seededStore(b)
	api := newUnverifiedAPI(b, store, 0)
	for i := range 100 {
		w := httptest.NewRecorder()
		body := `{"id":` + strconv.Itoa(1000+i) + `,"name":"Plant number ` + strconv.Itoa(i) + `","tag":"tag"}`
		api.ServeHTTP(w, benchRequest(http.MethodPost, "/plants", body))
		if w.Code != http.StatusOK {
			b.Fatalf("seeding: %d %s", w.Code, w.Body)
		}
	}
	for _, c := range []struct {
		name, method, target, body, inm string
		status                          int
	}{
		{"create", http.MethodPost, "/plants", `{"id":1000,"name":"Plant number 0","tag":"tag"}`, "", 200},
		{"get", http.MethodGet, "/plants/1000", "", "", 200},
		{"get-not-modified", http.MethodGet, "/plants/1000", "", etagOf(mustFind(b, store, 1000)), 304},
		{"change", http.MethodPatch, "/plants/1000", `{"name":"Plant number 0"}`, "", 200},
		{"list100", http.MethodGet, "/plants?limit=100&after=999", "", "", 200},
	} {
		req := benchRequest(c.method, c.target, c.body)
		if c.inm != "" {
			req.Header.Set("If-None-Match", c.inm)
		}
		b.Run(c.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				r := *req
				r.Body = io.NopCloser(strings.NewReader(c.body))
				clear(w.h)
				api.ServeHTTP(w, &r)
				if w.status != c.status {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// mustFind returns the plant stored under id.
func mustFind(b *testing.B, store *memory.Store, id domain.ID) domain.Plant {
	rec, ok := store.Record(id)
	if !ok {
		b.Fatalf("no plant %d", id)
	}
	return rec.Plant
}

func benchRequest(method, target, body string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer t")
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// discardWriter is the cheapest http.ResponseWriter, so that the benchmark
// measures the API and not a recorder.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkConnLimitTrack is what the connection limit costs a request on
// a keep-alive connection: the server reports it active, then idle again.
func BenchmarkConnLimitTrack(b *testing.B) {
	l := newConnLimit(64, 64, connHooks{open: func(int) {}})
	conns := make([]net.Conn, 64)
	for i := range conns {
		c, other := net.Pipe()
		b.Cleanup(func() { _ = c.Close(); _ = other.Close() })
		admitted, _ := l.admit(c, clientKey{})
		if admitted == nil {
			b.Fatal("not admitted")
		}
		conns[i] = admitted
		l.track(admitted, http.StateIdle)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := conns[i%len(conns)]
		l.track(c, http.StateActive)
		l.track(c, http.StateIdle)
		i++
	}
}
