package postgres

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// BenchmarkInsertIfAbsent measures creates of distinct plants from many
// goroutines, which group commit gathers into batches.
func BenchmarkInsertIfAbsent(b *testing.B) {
	s, _ := newStore(b)
	rec := record(b, 0, "Bench", "load")
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := rec
			r.Plant = record(b, next.Add(1), "Bench", "load").Plant
			if _, _, err := s.InsertIfAbsent(context.Background(), r); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	var m dto.Metric
	if err := s.metrics.batchSize.Write(&m); err == nil && m.GetHistogram().GetSampleCount() > 0 {
		h := m.GetHistogram()
		b.ReportMetric(h.GetSampleSum()/float64(h.GetSampleCount()), "creates/commit")
	}
}

// BenchmarkSingleInsert is the naive baseline: one unprepared statement and
// one commit per create, from as many goroutines.
func BenchmarkSingleInsert(b *testing.B) {
	s, _ := newStore(b)
	var next atomic.Int64
	now := time.Now().UTC()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, err := s.db.ExecContext(context.Background(),
				"INSERT INTO plants (id, name, tag, created_by, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
				next.Add(1), "Bench", "load", "bench", now)
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}
