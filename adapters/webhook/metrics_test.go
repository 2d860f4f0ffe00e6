package webhook

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// outboxStats is an outbox as a test sets it.
type outboxStats struct {
	pending, failed int
	oldest          time.Time
	err             error
}

func (o *outboxStats) OutboxStats(context.Context) (int, time.Time, int, error) {
	return o.pending, o.oldest, o.failed, o.err
}

// gauge reads an unlabelled gauge from reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// Attempts are counted by outcome, the latency of deliveries observed, and
// the outbox's gauges say what waits, since when, and what failed.
func TestMetricsCountAttemptsAndShowTheOutbox(t *testing.T) {
	reg := prometheus.NewRegistry()
	stats := &outboxStats{pending: 1, oldest: time.Now().Add(-90 * time.Second), failed: 2}
	m, err := NewMetrics(reg, stats)
	if err != nil {
		t.Fatal(err)
	}
	for _, outcome := range []string{"status", "status", "redirect", "redirect", "refused", "delivered"} {
		m.Attempted(outcome, 0)
	}
	m.Attempted("delivered", 1500*time.Millisecond)
	m.GaveUp()
	for outcome, want := range map[string]float64{"status": 2, "redirect": 2, "refused": 1, "delivered": 2} {
		if got := testutil.ToFloat64(m.attempts.WithLabelValues(outcome)); got != want {
			t.Errorf("attempts{outcome=%q} = %v; want %v", outcome, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.latency); n != 1 || testutil.ToFloat64(m.gaveUp) != 1 {
		t.Errorf("latency series %d, failed %v", n, testutil.ToFloat64(m.gaveUp))
	}
	if p, f := gauge(t, reg, "plantstore_webhook_events_pending"), gauge(t, reg, "plantstore_webhook_events_failed"); p != 1 || f != 2 {
		t.Errorf("pending %v, failed %v; want 1, 2", p, f)
	}
	if age := gauge(t, reg, "plantstore_webhook_oldest_pending_seconds"); age < 90 || age > 100 {
		t.Errorf("the oldest pending event is %vs old; want 90s", age)
	}
}

// An outbox never read shows as a gap, not as an empty outbox, and stale.
func TestMetricsOfAnUnreadableOutbox(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg, &outboxStats{err: errors.New("down")}); err != nil {
		t.Fatal(err)
	}
	if p, f, age, stale := gauge(t, reg, "plantstore_webhook_events_pending"), gauge(t, reg, "plantstore_webhook_events_failed"),
		gauge(t, reg, "plantstore_webhook_oldest_pending_seconds"), gauge(t, reg, "plantstore_webhook_outbox_stale"); p != -1 || f != -1 || age != 0 || stale != 1 {
		t.Errorf("pending %v, failed %v, age %v, stale %v; want -1, -1, 0, 1", p, f, age, stale)
	}
}

// An outbox that can no longer be read (the store stalled) keeps showing
// what was last read, its oldest event's age still growing, so that an
// alert on that age does not clear during the outage; the staleness gauge
// says so, and clears once the outbox is read again.
func TestMetricsOfAnOutboxThatCannotBeReadAnyMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		stats := &outboxStats{pending: 2, oldest: time.Now().Add(-177 * time.Second), failed: 1}
		if _, err := NewMetrics(reg, stats); err != nil {
			t.Fatal(err)
		}
		if stale := gauge(t, reg, "plantstore_webhook_outbox_stale"); stale != 0 {
			t.Fatalf("stale %v while the outbox is read", stale)
		}
		stats.err = errors.New("down")
		time.Sleep(time.Minute)
		if p, f, age, stale := gauge(t, reg, "plantstore_webhook_events_pending"), gauge(t, reg, "plantstore_webhook_events_failed"),
			gauge(t, reg, "plantstore_webhook_oldest_pending_seconds"), gauge(t, reg, "plantstore_webhook_outbox_stale"); p != 2 || f != 1 || age != 237 || stale != 1 {
			t.Errorf("a minute into the outage: pending %v, failed %v, age %v, stale %v; want 2, 1, 237, 1", p, f, age, stale)
		}
		stats.err, stats.pending, stats.oldest = nil, 0, time.Time{}
		time.Sleep(2 * time.Second)
		if p, age, stale := gauge(t, reg, "plantstore_webhook_events_pending"), gauge(t, reg, "plantstore_webhook_oldest_pending_seconds"),
			gauge(t, reg, "plantstore_webhook_outbox_stale"); p != 0 || age != 0 || stale != 0 {
			t.Errorf("read again: pending %v, age %v, stale %v; want 0, 0, 0", p, age, stale)
		}
	})
}
