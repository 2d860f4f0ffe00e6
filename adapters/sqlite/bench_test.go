package sqlite

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkInsertIfAbsent creates plants with unique ids from many concurrent
// clients, as the HTTP server would: group commit shares each fsync between
// the creates that arrive while the previous batch commits.
func BenchmarkInsertIfAbsent(b *testing.B) {
	s := newStore(b)
	batches := 0
	s.beforeFlush = func() { batches++ } // only the single writer goroutine runs this
	var next atomic.Int64
	ctx := context.Background()
	b.SetParallelism(16) // 16 clients per CPU
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p := mustPlant(b, next.Add(1), "Benchmark plant", ptr("bench"))
			if _, inserted, err := s.InsertIfAbsent(ctx, recordOf(p)); err != nil || !inserted {
				b.Fatalf("InsertIfAbsent: inserted=%v, %v", inserted, err)
			}
		}
	})
	b.StopTimer()
	if batches > 0 {
		b.ReportMetric(float64(b.N)/float64(batches), "creates/batch")
	}
}

// BenchmarkPlainLoop is the baseline without group commit: one transaction,
// and so one fsync, per create, with the same durability settings.
func BenchmarkPlainLoop(b *testing.B) {
	s := newStore(b)
	db, err := sql.Open("sqlite", dsn(s.path, false))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	insert, err := db.PrepareContext(ctx,
		`INSERT INTO plants (id, name, tag, created_by, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
	if err != nil {
		b.Fatal(err)
	}
	defer insert.Close()
	b.ResetTimer()
	for i := range b.N {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		_, err = tx.StmtContext(ctx, insert).ExecContext(ctx, int64(i), "Benchmark plant", "bench",
			"bench", time.Now().UTC().Format(createdAtLayout))
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
