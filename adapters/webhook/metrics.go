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

// statsTimeout bounds the outbox query of one scrape: during a store
// outage a scrape takes that long.
const statsTimeout = time.Second

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
	// One scrape reads the outbox once for its gauges. When it cannot be
	// read, the gauges keep what was last read, so that the oldest event's
	// age goes on growing through a store outage (its events cannot be
	// settled meanwhile) and an alert on it does not clear; the staleness
	// gauge says so.
	var (
		mu      sync.Mutex
		readAt  time.Time
		read    bool // ever
		stale   bool
		pending int
		oldest  time.Time
		failed  int
	)
	readStats := func() (int, time.Time, int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(readAt) > time.Second {
			ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
			defer cancel()
			p, o, f, err := stats.OutboxStats(ctx)
			if stale = err != nil; !stale {
				pending, oldest, failed, read = p, o, f, true
			}
			readAt = time.Now()
		}
		if !read {
			return -1, time.Time{}, -1, stale // a gap in the graph rather than a lie
		}
		return pending, oldest, failed, stale
	}
	collectors := []prometheus.Collector{
		m.attempts, m.latency, m.gaveUp,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "plantstore_webhook_events_pending",
			Help: "Events waiting for delivery in the outbox, as last read (-1 before the outbox could be read).",
		}, func() float64 { p, _, _, _ := readStats(); return float64(p) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "plantstore_webhook_oldest_pending_seconds",
			Help: "Age of the oldest event waiting for delivery, as last read; 0 when none waits.",
		}, func() float64 {
			if _, oldest, _, _ := readStats(); !oldest.IsZero() {
				return time.Since(oldest).Seconds()
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "plantstore_webhook_events_failed",
			Help: "Failed events kept in the outbox for the operator (plantstore webhooks), as last read (-1 before the outbox could be read).",
		}, func() float64 { _, _, f, _ := readStats(); return float64(f) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "plantstore_webhook_outbox_stale",
			Help: "1 when the outbox could not be read at the last try (the other outbox gauges show what was read before), else 0.",
		}, func() float64 {
			if _, _, _, stale := readStats(); stale {
				return 1
			}
			return 0
		}),
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
