// Package admin is the inbound adapter of the admin listener: liveness,
// readiness and Prometheus metrics, kept off the API listener so that they
// can be reached only from inside the cluster or the host.
package admin

import (
	"context"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/plantstore/plantstore/adapters/internal/requestid"
)

// Pinger reports whether the store answers. Store adapters implement it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// pingTimeout bounds a readiness check so that a hung store fails it
// instead of hanging the probe: the answer comes within a second, the
// shortest timeout a Kubernetes probe can have.
const pingTimeout = 900 * time.Millisecond

// Handler serves /healthz, /readyz and /metrics.
type Handler struct {
	mux      *http.ServeMux
	store    Pinger
	ids      *requestid.Source
	draining atomic.Bool
}

// New returns the admin handler. Metrics are gathered from g. With profiling,
// the Go runtime profiles are served under /debug/pprof/ as well.
func New(store Pinger, g prometheus.Gatherer, profiling bool) *Handler {
	h := &Handler{mux: http.NewServeMux(), store: store, ids: requestid.NewSource()}
	h.mux.HandleFunc("GET /healthz", h.healthz)
	h.mux.HandleFunc("GET /readyz", h.readyz)
	h.mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	if profiling {
		h.mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		h.mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		h.mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		h.mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		h.mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return h
}

// ServeHTTP serves one admin request; its response carries an X-Request-ID,
// as the API's do.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.ids.Assign(w, r)
	h.mux.ServeHTTP(w, r)
}

// Drain makes readiness fail from now on, so that load balancers stop
// sending traffic while the service shuts down.
func (h *Handler) Drain() { h.draining.Store(true) }

func (h *Handler) healthz(w http.ResponseWriter, _ *http.Request) {
	writeStatus(w, http.StatusOK, "ok")
}

func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	if h.draining.Load() {
		writeStatus(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pingTimeout)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		writeStatus(w, http.StatusServiceUnavailable, "store unavailable")
		return
	}
	writeStatus(w, http.StatusOK, "ready")
}

func writeStatus(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(text + "\n"))
}
