package admin

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

type fakeStore struct{ err error }

func (f *fakeStore) Ping(context.Context) error { return f.err }

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func TestReadinessFollowsTheStoreAndDraining(t *testing.T) {
	store := &fakeStore{}
	reg := prometheus.NewRegistry()
	h := New(store, reg, false)

	if rec := get(t, h, "/readyz"); rec.Code != http.StatusOK {
		t.Fatalf("ready store: got %d", rec.Code)
	}
	store.err = errors.New("connection refused")
	if rec := get(t, h, "/readyz"); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("store down: got %d", rec.Code)
	}
	if rec := get(t, h, "/healthz"); rec.Code != http.StatusOK {
		t.Fatalf("liveness must not depend on the store: got %d", rec.Code)
	}
	store.err = nil
	if rec := get(t, h, "/readyz"); rec.Code != http.StatusOK {
		t.Fatalf("store back: got %d", rec.Code)
	}
	h.Drain()
	if rec := get(t, h, "/readyz"); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("draining: got %d", rec.Code)
	}
}

func TestMetricsAreServedInPrometheusFormat(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "plantstore_example_total", Help: "x"})
	reg.MustRegister(c)
	c.Inc()
	rec := get(t, New(&fakeStore{}, reg, false), "/metrics")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "plantstore_example_total 1") {
		t.Fatalf("metrics: %d %q", rec.Code, rec.Body.String())
	}
}

func TestProfilesOnlyWhenAskedFor(t *testing.T) {
	reg := prometheus.NewRegistry()
	if rec := get(t, New(&fakeStore{}, reg, false), "/debug/pprof/"); rec.Code != http.StatusNotFound {
		t.Fatalf("profiles served without being enabled: %d", rec.Code)
	}
	if rec := get(t, New(&fakeStore{}, reg, true), "/debug/pprof/"); rec.Code != http.StatusOK {
		t.Fatalf("profiles not served when enabled: %d", rec.Code)
	}
}

// Every admin response carries an X-Request-ID: the caller's when sane, a
// new one for each request otherwise, on unknown paths too.
func TestAdminResponsesCarryARequestID(t *testing.T) {
	h := New(&fakeStore{}, prometheus.NewRegistry(), false)
	seen := map[string]bool{}
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/nope"} {
		id := get(t, h, path).Header().Get("X-Request-ID")
		if id == "" || seen[id] {
			t.Errorf("%s: X-Request-ID %q, want a new one", path, id)
		}
		seen[id] = true
	}
	req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	req.Header.Set("X-Request-ID", "probe-42")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if id := rec.Header().Get("X-Request-ID"); id != "probe-42" {
		t.Errorf("X-Request-ID %q, want the caller's probe-42", id)
	}
}
