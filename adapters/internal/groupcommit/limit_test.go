package groupcommit

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// climb runs the limit against a model of a store: rate(k) items per second
// with k batches in flight, every flush ending with items waiting. It
// returns the settings the limit took, window after window.
func climb(t *testing.T, max int, rate func(k int) float64, windows int) []int {
	t.Helper()
	l := newLimit(max)
	clock := time.Unix(0, 0)
	l.now = func() time.Time { return clock }
	l.since = clock
	var seen []int
	for range windows {
		k := l.writers()
		seen = append(seen, k)
		// One window: windowFlushes flushes whose items make rate(k).
		per := int(rate(k) * windowTime.Seconds() / windowFlushes)
		for range windowFlushes {
			clock = clock.Add(windowTime / windowFlushes)
			l.acquire()
			l.release(per, true)
		}
	}
	return seen
}

func TestTheLimitClimbsWhileMoreBatchesFlushMore(t *testing.T) {
	// Commits that wait on a disk: each batch in flight adds its share,
	// until 24 callers are all in flight.
	seen := climb(t, 64, func(k int) float64 { return 1000 * float64(min(k, 24)) }, 60)
	if last := seen[len(seen)-1]; last < 16 {
		t.Fatalf("settings %v; want the limit near where more batches stop paying (24)", seen)
	}
}

func TestTheLimitStaysLowWhenMoreBatchesFlushLess(t *testing.T) {
	// A store bound by its CPU: each batch in flight beyond the first adds
	// per-batch work and takes from the others.
	seen := climb(t, 64, func(k int) float64 { return 10000 / (1 + 0.1*float64(k-1)) }, 60)
	for _, k := range seen[10:] {
		if k > 2 {
			t.Fatalf("settings %v; want the limit to stay at one or two", seen)
		}
	}
}

func TestTheLimitSettlesAtTheBestSetting(t *testing.T) {
	// Two batches in flight are best, as on a small machine where one batch
	// commits while the next is written.
	best := map[int]float64{1: 8000, 2: 10000, 3: 9000}
	seen := climb(t, 64, func(k int) float64 {
		if r, ok := best[k]; ok {
			return r
		}
		return 8000
	}, 80)
	at := 0
	for _, k := range seen[20:] {
		if k == 2 {
			at++
		}
	}
	if at < len(seen[20:])*2/3 {
		t.Fatalf("settings %v; want mostly 2", seen)
	}
}

// A store bound by its CPU, measured through noise: each window's rate is
// off by up to 15 % either way, and for the first 40 windows it is rising
// too, as while a load and the store warm up. One or two batches in flight
// are best; the limit must not climb on a lucky window or on the rise.
func TestTheLimitStaysLowThroughNoiseAndWarmUp(t *testing.T) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 1))
		window := 0
		seen := climb(t, 16, func(k int) float64 {
			window++
			warm := min(1, 0.3+0.7*float64(window)/40)
			return warm * 10000 / (1 + 0.1*float64(k-1)) * (0.85 + 0.3*r.Float64())
		}, 400)
		high := 0
		for _, k := range seen {
			if k > 2 {
				high++
			}
		}
		if high > len(seen)/25 {
			t.Fatalf("seed %d: %d of %d windows above two batches in flight; settings %v", seed, high, len(seen), seen)
		}
	}
}

// concurrency runs callers that submit in a loop for a while and reports
// the most flushes that ran at once and the mean batch size.
func concurrency(t *testing.T, cfg Config, callers int, flush func(int)) (most int32, meanBatch float64) {
	t.Helper()
	var running, peak, batches, items atomic.Int32
	b := New(cfg, func(_ context.Context, batch []int) []Result[int] {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		flush(len(batch))
		running.Add(-1)
		batches.Add(1)
		items.Add(int32(len(batch)))
		return make([]Result[int], len(batch))
	})
	defer b.Close()
	stop := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if _, err := b.Submit(context.Background(), 1); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return peak.Load(), float64(items.Load()) / float64(max(1, batches.Load()))
}

// Flushes that wait without using CPU, as commits waiting on a disk, do not
// slow each other: the Batcher runs more of them at once when callers wait.
func TestMoreBatchesFlyWhenFlushesWaitOnTheDisk(t *testing.T) {
	most, _ := concurrency(t, Config{MaxBatch: 4, MaxWriters: 16}, 64, func(int) { time.Sleep(2 * time.Millisecond) })
	if most < 4 {
		t.Fatalf("at most %d flushes ran at once; waiting flushes that do not contend should reach several", most)
	}
}

// Flushes that contend for one resource, as the store's CPU on a small
// machine, slow each other: the Batcher keeps them few and their batches
// large. The resource is a lock each flush holds for a time that grows with
// its batch, sleeping rather than spinning, so that flushes contend with
// one another only and not with whatever else runs on the machine: the
// outcome does not depend on how much CPU the test itself gets.
func TestBatchesStayLargeWhenFlushesContend(t *testing.T) {
	var resource sync.Mutex
	_, mean := concurrency(t, Config{MaxBatch: 256, MaxWriters: 16}, 64, func(n int) {
		resource.Lock()
		defer resource.Unlock()
		time.Sleep(100*time.Microsecond + time.Duration(n)*5*time.Microsecond)
	})
	if mean < 16 {
		t.Fatalf("batches of %.1f items on average; contending flushes should keep them large", mean)
	}
}

// busy uses the CPU for d.
func busy(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}
