package sqlite

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// benchPlants is how many plants the read benchmarks store: ten pages.
const benchPlants = 1000

// seedPlants stores n plants, ids 0 to n-1, every other one tagged
// "bench", through the store, in a few batches.
func seedPlants(b *testing.B, s *Store, n int) {
	b.Helper()
	for from := 0; from < n; from += 500 {
		var recs []application.Record
		for id := from; id < min(from+500, n); id++ {
			var tag *string
			if id%2 == 0 {
				tag = ptr("bench")
			}
			recs = append(recs, recordOf(mustPlant(b, int64(id), fmt.Sprintf("Benchmark plant %d", id), tag)))
		}
		for _, r := range s.flush(context.Background(), creates(recs...)) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
}

// BenchmarkListPlants reads pages of 100 plants, as GET /plants does by
// default: with and without a tag, and (unrendered) of plants written
// around the service, with no item stored.
func BenchmarkListPlants(b *testing.B) {
	bench, _ := domain.ParseTag("bench")
	for _, c := range []struct {
		name string
		tag  domain.Tag
		sql  bool
	}{{"all", domain.NoTag, false}, {"tag", bench, false}, {"unrendered", domain.NoTag, true}} {
		b.Run(c.name, func(b *testing.B) {
			s := newStore(b)
			if c.sql {
				if _, err := s.write.Exec(`WITH RECURSIVE n(id) AS (SELECT 0 UNION ALL SELECT id + 1 FROM n WHERE id < ?)
INSERT INTO plants (id, name, tag, created_by, created_at) SELECT id, 'Benchmark plant ' || id, NULL, 'sql', '' FROM n`, benchPlants-1); err != nil {
					b.Fatal(err)
				}
			} else {
				seedPlants(b, s, benchPlants)
			}
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				q := application.ListQuery{Tag: c.tag, Limit: 100, After: domain.ID(i%5*100 - 1), HasAfter: true}
				page, err := s.ListPlants(ctx, q)
				if err != nil || page.Count != 100 {
					b.Fatalf("ListPlants: %d plants, %v", page.Count, err)
				}
				i++
			}
		})
	}
}

// BenchmarkFindPlant reads one plant by id, as GET /plants/{id} does.
func BenchmarkFindPlant(b *testing.B) {
	s := newStore(b)
	seedPlants(b, s, benchPlants)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, found, err := s.FindPlant(ctx, domain.ID(i%benchPlants)); err != nil || !found {
			b.Fatalf("FindPlant: %v, %v", found, err)
		}
		i++
	}
}

// BenchmarkRenamePlant renames stored plants from many concurrent clients,
// as PATCH /plants/{id} does: each rename reads, decides and writes in the
// single writer's batch.
func BenchmarkRenamePlant(b *testing.B) {
	s := newStore(b)
	seedPlants(b, s, benchPlants)
	var next atomic.Int64
	ctx := context.Background()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			name, _ := domain.ParseName(fmt.Sprintf("Renamed %d", n))
			if err := rename(ctx, s, domain.ID(n%benchPlants), name); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// rename renames the plant stored under id.
func rename(ctx context.Context, s *Store, id domain.ID, name domain.Name) error {
	_, err := s.UpdatePlant(ctx, id, func(stored domain.Plant) (domain.Plant, error) {
		return stored.WithName(name), nil
	})
	return err
}
