package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/plantstore/plantstore/domain"
)

// BenchmarkOneBatch writes full batches of 256 writes of one kind, each
// batch one transaction and one fsync, so that what a write costs the
// single writer shows beside the fsync they share (ns/write).
func BenchmarkOneBatch(b *testing.B) {
	const size = 256
	ctx := context.Background()
	run := func(b *testing.B, s *Store, batch func(round int) []write) {
		b.ReportAllocs()
		round := 0
		for b.Loop() {
			for _, r := range s.flush(ctx, batch(round)) {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
			round++
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(round*size), "ns/write")
	}
	b.Run("create", func(b *testing.B) {
		s := newStore(b)
		run(b, s, func(round int) []write {
			ws := make([]write, size)
			for i := range ws {
				ws[i] = createWrite(recordOf(mustPlant(b, int64(round*size+i), "Benchmark plant", ptr("bench"))))
			}
			return ws
		})
	})
	b.Run("rename", func(b *testing.B) {
		s := newStore(b)
		seedPlants(b, s, size)
		run(b, s, func(round int) []write {
			ws := make([]write, size)
			for i := range ws {
				name, _ := domain.ParseName(fmt.Sprintf("Renamed %d", round))
				ws[i] = renameWrite(domain.ID(i), name)
			}
			return ws
		})
	})
}

// renameWrite is the write that renames the plant stored under id.
func renameWrite(id domain.ID, name domain.Name) write {
	return updateWrite(id, func(stored domain.Plant) (domain.Plant, error) { return stored.WithName(name), nil })
}
