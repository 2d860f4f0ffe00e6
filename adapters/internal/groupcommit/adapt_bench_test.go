package groupcommit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAdaptiveGroupCommit shows how group commit follows the store.
// Callers submit, wait for their answer, sleep 200 µs (the rest of a
// request; the timer may round it up), and submit again; a batch holds at
// most 32 items.
//
//   - disk: each flush sleeps 1 ms without using the CPU, as a commit waiting
//     on a disk does. Flushes do not slow each other, so the Batcher runs
//     more of them as callers wait, and ops/s follows callers ÷ (flush +
//     sleep), both as measured: the ideal/s metric. With the writers bounded
//     to two, as the service once was, ops/s is capped by the bound instead.
//   - cpu: each flush holds one shared processor for 50 µs plus 5 µs per
//     item, as a store bound by its CPU does. More flushes at once only slow
//     each other: the Batcher keeps them few and the batches large.
//
// It reports ops/s, the mean batch and the most flushes that ran at once.
func BenchmarkAdaptiveGroupCommit(b *testing.B) {
	var cpu sync.Mutex
	disk := func(int) { time.Sleep(time.Millisecond) }
	processor := func(n int) {
		cpu.Lock()
		defer cpu.Unlock()
		busy(50*time.Microsecond + time.Duration(n)*5*time.Microsecond)
	}
	for _, c := range []struct {
		name       string
		flush      func(int)
		callers    int
		maxWriters int
	}{
		{"disk/callers=64", disk, 64, 64},
		{"disk/callers=256", disk, 256, 64},
		{"disk/callers=256/two-writers", disk, 256, 2},
		{"cpu/callers=64", processor, 64, 64},
	} {
		b.Run(c.name, func(b *testing.B) {
			var running, peak, batches, items, flushTime, thinkTime atomic.Int64
			bt := New(Config{MaxBatch: 32, MaxWriters: c.maxWriters}, func(_ context.Context, batch []int) []Result[int] {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				start := time.Now()
				c.flush(len(batch))
				flushTime.Add(int64(time.Since(start)))
				running.Add(-1)
				batches.Add(1)
				items.Add(int64(len(batch)))
				return make([]Result[int], len(batch))
			})
			defer bt.Close()
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			start := time.Now()
			for range c.callers {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						if _, err := bt.Submit(context.Background(), 1); err != nil {
							b.Error(err)
							return
						}
						start := time.Now()
						time.Sleep(200 * time.Microsecond)
						thinkTime.Add(int64(time.Since(start)))
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
			if c.name[:4] == "disk" {
				cycle := time.Duration(flushTime.Load()/max(1, batches.Load()) + thinkTime.Load()/int64(b.N))
				b.ReportMetric(float64(c.callers)/cycle.Seconds(), "ideal/s")
			}
			b.ReportMetric(float64(items.Load())/float64(max(1, batches.Load())), "items/batch")
			b.ReportMetric(float64(peak.Load()), "max-flushes")
		})
	}
}
