package sqlite

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics describe group commit: how long a batch takes from BEGIN to
// COMMIT (the fsync included) and how many writes share it.
type metrics struct {
	duration prometheus.Histogram
	size     prometheus.Histogram
	queued   prometheus.GaugeFunc
	shed     prometheus.CounterFunc
	pools    []prometheus.Collector
}

func newMetrics(s *Store) *metrics {
	labels := prometheus.Labels{"store": "sqlite"}
	return &metrics{
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "plantstore_store_batch_duration_seconds",
			Help:        "Time to write and commit one batch of writes (creates, updates and deletes).",
			ConstLabels: labels,
			Buckets:     prometheus.ExponentialBuckets(0.0001, 2, 16), // 100µs to ~3s
		}),
		size: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "plantstore_store_batch_size",
			Help:        "Writes (creates, updates and deletes) committed together in one batch.",
			ConstLabels: labels,
			Buckets:     prometheus.ExponentialBuckets(1, 2, 9), // 1 to 256
		}),
		queued: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "plantstore_store_queued_writes",
			Help:        "Writes (creates, updates and deletes) waiting to join a batch.",
			ConstLabels: labels,
		}, func() float64 { return float64(s.batcher.Queued()) }),
		shed: prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "plantstore_store_shed_total",
			Help:        "Requests refused at once (503) because as many waited for the store as its queue holds, by batch: write.",
			ConstLabels: prometheus.Labels{"store": "sqlite", "batch": "write"},
		}, func() float64 { return float64(s.batcher.Shed()) }),
		pools: []prometheus.Collector{
			collectors.NewDBStatsCollector(s.write.DB, "sqlite_write"),
			collectors.NewDBStatsCollector(s.read.DB, "sqlite_read"),
		},
	}
}

func (m *metrics) observeBatch(size int, d time.Duration) {
	m.duration.Observe(d.Seconds())
	m.size.Observe(float64(size))
}

// RegisterMetrics adds the store's metrics to reg: batch duration and size,
// the write queue and the writes it shed, and the connection pools'
// statistics.
func (s *Store) RegisterMetrics(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range append([]prometheus.Collector{s.metrics.duration, s.metrics.size, s.metrics.queued, s.metrics.shed}, s.metrics.pools...) {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}
