package postgres

import (
	"database/sql"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the store's Prometheus collectors. They exist from Open on and
// count whether or not anyone registers them.
type metrics struct {
	pool          prometheus.Collector
	batchDuration prometheus.Histogram
	batchSize     prometheus.Histogram
	queued        prometheus.GaugeFunc
	inFlight      []prometheus.Collector
	shed          []prometheus.Collector
	readDuration  *prometheus.HistogramVec
	readSize      *prometheus.HistogramVec
}

// batchCounts are what each batcher (write, find, list) reports: how many
// of its batches may run at once, and how many items it shed.
type batchCounts struct {
	limit func() int
	shed  func() uint64
}

func newMetrics(db *sql.DB, queued func() int, batches map[string]batchCounts) *metrics {
	// The embedded store publishes the same names with store="sqlite", so
	// one dashboard serves both.
	labels := prometheus.Labels{"store": "postgres"}
	var inFlight, shed []prometheus.Collector
	for batch, c := range batches {
		inFlight = append(inFlight, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "plantstore_store_batches_in_flight_limit",
			Help:        "How many batches may run at once now, as group commit adapted it to load and latency, by batch: write, find, list or events.",
			ConstLabels: prometheus.Labels{"store": "postgres", "batch": batch},
		}, func() float64 { return float64(c.limit()) }))
		shed = append(shed, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "plantstore_store_shed_total",
			Help:        "Requests refused at once (503) because as many waited for the store as its queue holds, by batch: write, find, list or events.",
			ConstLabels: prometheus.Labels{"store": "postgres", "batch": batch},
		}, func() float64 { return float64(c.shed()) }))
	}
	return &metrics{
		inFlight: inFlight,
		shed:     shed,
		pool:     collectors.NewDBStatsCollector(db, "plantstore"),
		batchDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "plantstore_store_batch_duration_seconds",
			Help:        "Time to store one batch of writes (creates and deletes), from the statement to its commit.",
			ConstLabels: labels,
			Buckets:     prometheus.ExponentialBuckets(0.0001, 2, 16), // 100µs to ~3s, as the embedded store
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "plantstore_store_batch_size",
			Help:        "Writes (creates and deletes) stored by one batch.",
			ConstLabels: labels,
			Buckets:     prometheus.ExponentialBuckets(1, 2, 9), // 1 to 256
		}),
		queued: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "plantstore_store_queued_writes",
			Help:        "Writes (creates and deletes) waiting to join a batch; a growing queue means commits lag behind clients.",
			ConstLabels: labels,
		}, func() float64 { return float64(queued()) }),
		readDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "plantstore_store_read_batch_duration_seconds",
			Help:        "Time of one gathered read query, by read: find (point reads), list (pages) or events (pages of the event feed).",
			ConstLabels: labels,
			Buckets:     prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"read"}),
		readSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "plantstore_store_read_batch_size",
			Help:        "Reads answered by one gathered query, by read: find (point reads), list (pages) or events (pages of the event feed).",
			ConstLabels: labels,
			Buckets:     prometheus.ExponentialBuckets(1, 2, 9),
		}, []string{"read"}),
	}
}

func (m *metrics) observeReads(read string, size int, took time.Duration) {
	m.readSize.WithLabelValues(read).Observe(float64(size))
	m.readDuration.WithLabelValues(read).Observe(took.Seconds())
}

func (m *metrics) observeBatch(size int, took time.Duration) {
	m.batchSize.Observe(float64(size))
	m.batchDuration.Observe(took.Seconds())
}

// RegisterMetrics registers the store's metrics with reg: the connection
// pool gauges (go_sql_*, labelled db_name="plantstore") and the batch
// histograms plantstore_store_batch_duration_seconds and
// plantstore_store_batch_size, the gauge plantstore_store_queued_writes and,
// by batch, plantstore_store_batches_in_flight_limit and
// plantstore_store_shed_total, labelled store="postgres".
func (s *Store) RegisterMetrics(reg prometheus.Registerer) error {
	return errors.Join(
		reg.Register(s.metrics.pool),
		reg.Register(s.metrics.batchDuration),
		reg.Register(s.metrics.batchSize),
		reg.Register(s.metrics.queued),
		reg.Register(s.metrics.readDuration),
		reg.Register(s.metrics.readSize),
		registerAll(reg, s.metrics.inFlight),
		registerAll(reg, s.metrics.shed),
	)
}

func registerAll(reg prometheus.Registerer, cs []prometheus.Collector) error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}
