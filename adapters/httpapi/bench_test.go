package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

type nopStore struct{}

func (nopStore) InsertIfAbsent(_ context.Context, rec application.Record) (domain.Plant, bool, error) {
	return rec.Plant, true, nil
}

type staticVerifier struct{ p application.Principal }

func (v staticVerifier) Verify(context.Context, string) (application.Principal, error) {
	return v.p, nil
}

// BenchmarkServeCreate is the HTTP adapter's share of a create: router,
// request id, access log, metrics, decoding, the use case on a no-op store
// and encoding, with token verification left out.
func BenchmarkServeCreate(b *testing.B) {
	api, err := New(Config{}, application.NewCreatePlant(nopStore{}, "plants:write"),
		staticVerifier{application.Principal{Subject: "bench", Scopes: []string{"plants:write"}}},
		slog.New(slog.NewJSONHandler(io.Discard, nil)), nil)
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"id":12345,"name":"Monstera deliciosa","tag":"tropical"}`)
	req := httptest.NewRequest(http.MethodPost, "/plants", nil)
	req.Header.Set("Authorization", "Bearer x")
	req.Header.Set("Content-Type", "application/json")
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
}

type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

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
