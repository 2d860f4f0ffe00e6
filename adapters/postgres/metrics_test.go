package postgres

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestMetricsCountBatchesAndThePool(t *testing.T) {
	s, _ := newStore(t)
	reg := prometheus.NewRegistry()
	if err := s.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.InsertIfAbsent(context.Background(), record(t, 1, "Hosta", "")); err != nil {
		t.Fatal(err)
	}

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				if !hasLabel(m.GetLabel(), "store", "postgres") {
					t.Errorf("%s lacks the label store=\"postgres\"", f.GetName())
				}
				found[f.GetName()] = h.GetSampleCount()
			} else {
				found[f.GetName()] = 1
			}
		}
	}
	for _, name := range []string{"plantstore_store_batch_duration_seconds", "plantstore_store_batch_size"} {
		if found[name] != 1 {
			t.Errorf("%s has %d samples; want 1", name, found[name])
		}
	}
	if _, ok := found["plantstore_store_queued_writes"]; !ok {
		t.Errorf("queue gauge missing; have %v", found)
	}
	if _, ok := found["go_sql_open_connections"]; !ok {
		t.Errorf("pool gauges missing; have %v", found)
	}
}

func hasLabel(labels []*dto.LabelPair, name, value string) bool {
	for _, l := range labels {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}
