package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkDecodeNewPlant is the strict decoder alone; the whole request path
// is BenchmarkRequestPath in cmd/plantstore.
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
// answer is the Plant body), a read, and a list of 100. It measures what the
// plant's encoder costs a whole request; the token check is a stub.
func BenchmarkAnswers(b *testing.B) {
	store := seededStore(b)
	api := newTestAPI(b, store, 0)
	for i := range 100 {
		w := httptest.NewRecorder()
		body := `{"id":` + strconv.Itoa(1000+i) + `,"name":"Plant number ` + strconv.Itoa(i) + `","tag":"tag"}`
		api.ServeHTTP(w, benchRequest(http.MethodPost, "/plants", body))
		if w.Code != http.StatusOK {
			b.Fatalf("seeding: %d %s", w.Code, w.Body)
		}
	}
	for _, c := range []struct{ name, method, target, body string }{
		{"create", http.MethodPost, "/plants", `{"id":1000,"name":"Plant number 0","tag":"tag"}`},
		{"get", http.MethodGet, "/plants/1000", ""},
		{"list100", http.MethodGet, "/plants?limit=100&after=999", ""},
	} {
		req := benchRequest(c.method, c.target, c.body)
		b.Run(c.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				r := *req
				r.Body = io.NopCloser(strings.NewReader(c.body))
				clear(w.h)
				api.ServeHTTP(w, &r)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
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
