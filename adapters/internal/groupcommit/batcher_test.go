package groupcommit

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// gatedFlush records every batch and holds the first flush until release is
// closed, so tests can pile items up behind it. It answers item v with v*10.
type gatedFlush struct {
	mu      sync.Mutex
	batches [][]int
	entered chan struct{} // closed when the first flush starts
	release chan struct{}
	once    sync.Once
}

func newGatedFlush() *gatedFlush {
	return &gatedFlush{entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedFlush) flush(_ context.Context, batch []int) []Result[int] {
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
	g.mu.Lock()
	g.batches = append(g.batches, slices.Clone(batch))
	g.mu.Unlock()
	out := make([]Result[int], len(batch))
	for i, v := range batch {
		out[i] = Result[int]{Value: v * 10}
	}
	return out
}

func (g *gatedFlush) seen() [][]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.batches)
}

func (g *gatedFlush) flushed() []int {
	var all []int
	for _, batch := range g.seen() {
		all = append(all, batch...)
	}
	slices.Sort(all)
	return all
}

// waitQueued waits until n items sit in b's queue.
func waitQueued[T, R any](b *Batcher[T, R], n int) {
	for len(b.queue) < n {
		runtime.Gosched()
	}
}

// submitAll submits items concurrently; the returned channel yields every
// result, in item order, once all Submit calls have returned.
func submitAll(b *Batcher[int, int], items ...int) <-chan []Result[int] {
	out := make(chan []Result[int], 1)
	go func() {
		res := make([]Result[int], len(items))
		var wg sync.WaitGroup
		for i, v := range items {
			wg.Go(func() { res[i].Value, res[i].Err = b.Submit(context.Background(), v) })
		}
		wg.Wait()
		out <- res
	}()
	return out
}

func mustSucceed(t *testing.T, items []int, res []Result[int]) {
	t.Helper()
	for i, r := range res {
		if r.Err != nil || r.Value != items[i]*10 {
			t.Errorf("Submit(%d) = %d, %v; want %d, nil", items[i], r.Value, r.Err, items[i]*10)
		}
	}
}

func TestItemsQueuedDuringAFlushFormOneBatch(t *testing.T) {
	g := newGatedFlush()
	b := New(Config{}, g.flush)
	defer b.Close()

	first := submitAll(b, 0)
	<-g.entered
	items := []int{1, 2, 3, 4, 5, 6, 7, 8}
	rest := submitAll(b, items...)
	waitQueued(b, len(items))
	close(g.release)

	mustSucceed(t, []int{0}, <-first)
	mustSucceed(t, items, <-rest)
	batches := g.seen()
	if len(batches) != 2 || len(batches[1]) != len(items) {
		t.Fatalf("batches = %v, want [0] then all eight queued items in one batch", batches)
	}
}

func TestBatchesNeverExceedMaxBatch(t *testing.T) {
	g := newGatedFlush()
	b := New(Config{MaxBatch: 3}, g.flush)
	defer b.Close()

	first := submitAll(b, 0)
	<-g.entered
	items := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	rest := submitAll(b, items...)
	waitQueued(b, 3) // the queue holds MaxBatch*Writers; the others wait to send
	close(g.release)

	mustSucceed(t, []int{0}, <-first)
	mustSucceed(t, items, <-rest)
	for _, batch := range g.seen() {
		if len(batch) > 3 {
			t.Errorf("batch %v is larger than MaxBatch 3", batch)
		}
	}
	if got := g.flushed(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Errorf("flushed %v, want every item exactly once", got)
	}
}

func TestAnItemErrorFailsOnlyThatItem(t *testing.T) {
	errOdd := errors.New("odd items are refused")
	entered, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	b := New(Config{}, func(_ context.Context, batch []int) []Result[int] {
		once.Do(func() { close(entered); <-gate })
		out := make([]Result[int], len(batch))
		for i, v := range batch {
			if v%2 == 1 {
				out[i].Err = errOdd
			} else {
				out[i].Value = v * 10
			}
		}
		return out
	})
	defer b.Close()

	first := submitAll(b, 0)
	<-entered
	rest := submitAll(b, 1, 2, 3, 4)
	waitQueued(b, 4)
	close(gate)
	<-first
	for i, r := range <-rest {
		v := i + 1
		switch {
		case v%2 == 1 && !errors.Is(r.Err, errOdd):
			t.Errorf("Submit(%d) error = %v, want the item's own error", v, r.Err)
		case v%2 == 0 && (r.Err != nil || r.Value != v*10):
			t.Errorf("Submit(%d) = %d, %v; want %d, nil despite failing neighbours", v, r.Value, r.Err, v*10)
		}
	}
}

func TestCloseFlushesQueuedItemsThenRefusesNewOnes(t *testing.T) {
	g := newGatedFlush()
	b := New(Config{}, g.flush)

	first := submitAll(b, 0)
	<-g.entered
	items := []int{1, 2, 3, 4, 5}
	rest := submitAll(b, items...)
	waitQueued(b, len(items))

	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	for !isClosed(b) {
		runtime.Gosched()
	}
	if _, err := b.Submit(context.Background(), 99); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Close = %v, want ErrClosed", err)
	}
	close(g.release)
	<-closed

	mustSucceed(t, []int{0}, <-first)
	mustSucceed(t, items, <-rest)
	if got := g.flushed(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("flushed %v, want every item queued before Close and nothing after", got)
	}
	b.Close() // a second Close is harmless
}

func isClosed[T, R any](b *Batcher[T, R]) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.closed
}

func TestCancelWhileQueuedIsNeverFlushed(t *testing.T) {
	g := newGatedFlush()
	b := New(Config{}, g.flush)

	first := submitAll(b, 0)
	<-g.entered
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := b.Submit(ctx, 7)
		errc <- err
	}()
	waitQueued(b, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Submit with a cancelled context = %v, want context.Canceled", err)
	}
	close(g.release)
	<-first
	b.Close()
	if got := g.flushed(); !slices.Equal(got, []int{0}) {
		t.Errorf("flushed %v, want the cancelled item left out", got)
	}
}

func TestSubmitWithDoneContextIsRefusedUpFront(t *testing.T) {
	g := newGatedFlush()
	close(g.release)
	b := New(Config{}, g.flush)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Submit(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Submit = %v, want context.Canceled", err)
	}
	b.Close()
	if got := g.flushed(); len(got) != 0 {
		t.Errorf("flushed %v, want nothing", got)
	}
}

// A submitter whose deadline passes while its batch is in flight stops
// waiting then, told that the outcome is unknown; the flush goes on with
// its own context and its result is dropped, and the batcher serves on.
func TestATakenItemsSubmitterLeavesAtItsDeadline(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var (
		once     sync.Once
		flushErr = make(chan error, 1)
	)
	b := New(Config{}, func(fctx context.Context, batch []int) []Result[int] {
		once.Do(func() {
			close(entered)
			<-release
			flushErr <- fctx.Err()
		})
		out := make([]Result[int], len(batch))
		for i, v := range batch {
			out[i] = Result[int]{Value: v * 10}
		}
		return out
	})
	defer b.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.Submit(ctx, 1)
		done <- err
	}()
	<-entered
	err := <-done // while the flush is still held
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Submit = %v; want ErrOutcomeUnknown and context.DeadlineExceeded", err)
	}
	close(release)
	if err := <-flushErr; err != nil {
		t.Errorf("flush context ended with the submitter's: %v", err)
	}
	for i := range 3 { // the left request is recycled, not answered twice
		if v, err := b.Submit(context.Background(), 2+i); err != nil || v != (2+i)*10 {
			t.Errorf("Submit(%d) after the departure = %d, %v", 2+i, v, err)
		}
	}
}

// A full queue refuses a new item at once, without waiting for room, and
// counts it; items already queued are flushed.
func TestAFullQueueShedsNewItemsAtOnce(t *testing.T) {
	g := newGatedFlush()
	b := New(Config{MaxBatch: 2, MaxQueued: 3}, g.flush)
	first := submitAll(b, 0)
	<-g.entered
	queued := submitAll(b, 1, 2, 3)
	waitQueued(b, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if _, err := b.Submit(ctx, 4); !errors.Is(err, ErrOverloaded) {
		t.Errorf("Submit to a full queue = %v; want ErrOverloaded", err)
	}
	if b.Shed() != 1 {
		t.Errorf("Shed() = %d; want 1", b.Shed())
	}
	close(g.release)
	mustSucceed(t, []int{0}, <-first)
	mustSucceed(t, []int{1, 2, 3}, <-queued)
	b.Close()
	if got := g.flushed(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("flushed %v; want 0 to 3, the shed item left out", got)
	}
}

func TestMaxWaitGathersAFullBatch(t *testing.T) {
	g := newGatedFlush()
	close(g.release)
	// A day of MaxWait: only a full batch lets this test finish.
	b := New(Config{MaxBatch: 4, MaxWait: 24 * time.Hour}, g.flush)
	defer b.Close()
	items := []int{1, 2, 3, 4}
	mustSucceed(t, items, <-submitAll(b, items...))
	if batches := g.seen(); len(batches) != 1 {
		t.Errorf("batches = %v, want one full batch", batches)
	}
}

func BenchmarkSubmit(b *testing.B) {
	batcher := New(Config{}, func(_ context.Context, batch []int) []Result[int] {
		return make([]Result[int], len(batch))
	})
	defer batcher.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := batcher.Submit(context.Background(), 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}
