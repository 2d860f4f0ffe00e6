package webhook

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// OutboxStats reports the outbox: events still to deliver, when the oldest
// of them was committed, and the events that failed. Stores implement it.
type OutboxStats interface {
	OutboxStats(ctx context.Context) (pending int, oldest time.Time, failed int, err error)
}

// Metrics are the webhook's Prometheus collectors. They observe the
// delivery worker's attempts (adapters/dispatch's Observer).
type Metrics struct {
	attempts *prometheus.CounterVec
	latency  prometheus.Histogram
	gaveUp   prometheus.Counter
}

// statsTimeout bounds the outbox query of one scrape.
const statsTimeout = 2 * time.Second

// NewMetrics registers the webhook's metrics on reg, the outbox's gauges
// read from stats at each scrape.
func NewMetrics(reg prometheus.Registerer, stats OutboxStats) (*Metrics, error) {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "plantstore_webhook_attempts_total",
			Help: "Attempts to deliver webhook events (either payload), by outcome: delivered, status, redirect, timeout, refused, error.",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "plantstore_webhook_delivery_latency_seconds",
			Help:    "Time from an event's commit, with its write, to its receiver's 2xx.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 20), // 5 ms to about 45 min
		}),
		gaveUp: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "plantstore_webhook_events_failed_total",
			Help: "Events marked failed: not delivered within their maximum age.",
		}),
	}
	// One scrape reads the outbox once for its three gauges.
	var (
		mu      sync.Mutex
		readAt  time.Time
		pending int
		oldest  time.Time
		failed  int
	)
	read := func() (int, time.Time, int) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(readAt) > time.Second {
			ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
			defer cancel()
			var err error
			if pending, oldest, failed, err = stats.OutboxStats(ctx); err != nil {
				pending, oldest, failed = -1, time.Time{}, -1 // a gap in the graph rather than a lie
			}
			readAt = time.Now()
		}
		return pending, oldest, failed
	}
	collectors := []prometheus.Collector{
		m.attempts, m.latency, m.gaveUp,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "plantstore_webhook_events_pending",
			Help: "Events waiting for delivery in the outbox (-1 when the outbox cannot be read).",
		}, func() float64 { p, _, _ := read(); return float64(p) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "plantstore_webhook_oldest_pending_seconds",
			Help: "Age of the oldest event waiting for delivery; 0 when none waits.",
		}, func() float64 {
			if _, oldest, _ := read(); !oldest.IsZero() {
				return time.Since(oldest).Seconds()
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "plantstore_webhook_events_failed",
			Help: "Failed events kept in the outbox for the operator (plantstore webhooks).",
		}, func() float64 { _, _, f := read(); return float64(f) }),
	}
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Attempted counts an attempt and, when delivered, its latency.
func (m *Metrics) Attempted(outcome string, latency time.Duration) {
	m.attempts.WithLabelValues(outcome).Inc()
	if outcome == "delivered" {
		m.latency.Observe(latency.Seconds())
	}
}

// GaveUp counts an event marked failed.
func (m *Metrics) GaveUp() { m.gaveUp.Inc() }
