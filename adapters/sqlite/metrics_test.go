package sqlite

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMetricsDescribeBatches(t *testing.T) {
	s := newStore(t)
	reg := prometheus.NewPedanticRegistry()
	if err := s.RegisterMetrics(reg); err != nil {
		t.Fatalf("RegisterMetrics: %v", err)
	}
	for i := range 3 {
		if _, _, err := s.InsertIfAbsent(context.Background(), recordOf(mustPlant(t, int64(i), "Fern", nil))); err != nil {
			t.Fatal(err)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	counts := map[string]uint64{}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
		for _, m := range f.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				counts[f.GetName()] += h.GetSampleCount()
			}
		}
	}
	for _, name := range []string{"plantstore_store_batch_duration_seconds", "plantstore_store_batch_size"} {
		if counts[name] != 3 {
			t.Errorf("%s counted %d batches, want 3 (one per sequential create)", name, counts[name])
		}
	}
	for _, name := range []string{"plantstore_store_queued_writes", "go_sql_open_connections"} {
		if !names[name] {
			t.Errorf("metric %s not registered", name)
		}
	}
}
