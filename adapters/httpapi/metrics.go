package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// metrics are the adapter's Prometheus collectors. Every label has a closed
// set of values: route patterns, known methods, status codes, outcomes, the
// verifiers' reasons and what the connection limit did.
type metrics struct {
	requests        *prometheus.CounterVec
	duration        *prometheus.HistogramVec
	operations      *prometheus.CounterVec
	authFailures    *prometheus.CounterVec
	openConnections prometheus.Gauge
	shedConnections *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plantstore_http_requests_total",
			Help: "HTTP requests served by the API listener.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "plantstore_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request on the API listener.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method", "status"}),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plantstore_plant_operations_total",
			Help: "Requests that reached a use case, by operation (create, get, list, change, delete, events) and outcome (created, replayed, found, listed, changed, deleted, conflict, not_found, precondition_failed, expired, invalid, unavailable, canceled, error).",
		}, []string{"operation", "outcome"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plantstore_auth_failures_total",
			Help: "Requests refused by authentication or authorization, by reason.",
		}, []string{"reason"}),
		openConnections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "plantstore_http_open_connections",
			Help: "Client connections open on the API listener, under its connection limit.",
		}),
		shedConnections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plantstore_http_connections_shed_total",
			Help: "Connections the API listener shed to keep its connection limit for clients that use it, by action: closed_idle (an idle keep-alive connection closed to make room), closed_no_request (one that had sent no whole request closed to make room), head_timeout (closed for not sending a request head in time), refused (a new connection answered 503 unread at the cap), refused_client (the same at its client address's share) or dropped (closed unanswered, its client address having refusals enough in progress).",
		}, []string{"action"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.operations, m.authFailures, m.openConnections, m.shedConnections} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observeRequest(route, method string, status int, elapsed time.Duration) {
	labels := [3]string{route, methodLabel(method), statusLabel(status)}
	m.requests.WithLabelValues(labels[:]...).Inc()
	m.duration.WithLabelValues(labels[:]...).Observe(elapsed.Seconds())
}

// countRequest counts a request whose duration is not known.
func (m *metrics) countRequest(route, method string, status int) {
	m.requests.WithLabelValues(route, methodLabel(method), statusLabel(status)).Inc()
}

// operation counts one request that reached a use case.
func (m *metrics) operation(op, outcome string) {
	m.operations.WithLabelValues(op, outcome).Inc()
}

// outcome labels how a use case answered: success when err is nil, else the
// kind of error.
func outcome(success string, err error) string {
	switch {
	case err == nil:
		return success
	case errors.Is(err, domain.ErrNotFound):
		return "not_found"
	case errors.Is(err, domain.ErrConflict):
		return "conflict"
	case errors.Is(err, application.ErrPreconditionFailed):
		return "precondition_failed"
	case errors.Is(err, application.ErrFeedExpired):
		return "expired"
	case errors.Is(err, domain.ErrInvalid):
		return "invalid"
	case errors.Is(err, application.ErrUnavailable), errors.Is(err, context.DeadlineExceeded), errors.Is(err, errPagesBusy), errors.Is(err, errShuttingDown):
		return "unavailable"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// createOutcome tells a create from a replay.
func createOutcome(o application.Outcome, err error) string {
	if err == nil && o == application.Replayed {
		return "replayed"
	}
	return outcome("created", err)
}

// connectionShed counts what the connection limit did: closed_idle,
// closed_no_request, head_timeout, refused, refused_client or dropped.
func (m *metrics) connectionShed(action string) {
	m.shedConnections.WithLabelValues(action).Inc()
}

func (m *metrics) authFailure(err error) {
	reason := "error"
	var te *application.TokenError
	switch {
	case errors.Is(err, errNoToken):
		reason = "missing"
	case errors.Is(err, application.ErrForbidden):
		reason = "scope"
	case errors.As(err, &te):
		reason = reasonLabel(te.Reason)
	}
	m.authFailures.WithLabelValues(reason).Inc()
}

// reasonLabel keeps a verifier's reason a short lowercase word so that a
// misbehaving verifier cannot blow up the label set.
func reasonLabel(reason string) string {
	if reason == "" || len(reason) > 24 {
		return "other"
	}
	for i := 0; i < len(reason); i++ {
		if c := reason[i]; !(c >= 'a' && c <= 'z' || c == '_') {
			return "other"
		}
	}
	return reason
}

func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// statusLabels avoids formatting the common status codes on every request.
var statusLabels = func() map[int]string {
	m := make(map[int]string)
	for s := 100; s < 600; s++ {
		if http.StatusText(s) != "" {
			m[s] = strconv.Itoa(s)
		}
	}
	return m
}()

func statusLabel(s int) string {
	if l, ok := statusLabels[s]; ok {
		return l
	}
	return strconv.Itoa(s)
}
