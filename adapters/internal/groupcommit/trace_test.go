package groupcommit

import (
	"context"
	"slices"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// A batch commit has one span of its own, the parent of what its flush
// does, linked to the span of every traced request it served: a batch
// serves many requests, so none of them is its parent. Untraced items
// neither link nor start a span.
func TestABatchSpanLinksToEveryTracedSubmitter(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)).Tracer("test")
	g := newGatedFlush()
	var flushSpans []trace.SpanContext
	var mu sync.Mutex
	b := New(Config{MaxBatch: 8}, func(ctx context.Context, batch []int) []Result[int] {
		mu.Lock()
		flushSpans = append(flushSpans, trace.SpanContextFromContext(ctx))
		mu.Unlock()
		return g.flush(ctx, batch)
	})
	defer b.Close()

	var wg sync.WaitGroup
	wg.Go(func() { _, _ = b.Submit(context.Background(), 0) }) // untraced: a batch alone
	<-g.entered
	var requests []trace.SpanContext
	for i := 1; i <= 2; i++ {
		ctx, span := tracer.Start(context.Background(), "request")
		requests = append(requests, span.SpanContext())
		wg.Go(func() { defer span.End(); _, _ = b.Submit(ctx, i) })
	}
	waitQueued(b, 2)
	wg.Go(func() { _, _ = b.Submit(context.Background(), 3) }) // untraced, in the same batch
	waitQueued(b, 3)
	close(g.release)
	wg.Wait()

	var batches []sdktrace.ReadOnlySpan
	for _, s := range recorder.Ended() {
		if s.Name() == "batch commit" {
			batches = append(batches, s)
		}
	}
	if len(batches) != 1 {
		t.Fatalf("%d batch spans; want one, for the batch of traced requests (batches %v)", len(batches), g.seen())
	}
	batch := batches[0]
	if batch.Parent().IsValid() {
		t.Errorf("batch span has parent %v; want none", batch.Parent())
	}
	var linked []trace.SpanContext
	for _, l := range batch.Links() {
		linked = append(linked, l.SpanContext)
	}
	// The requests queued in either order.
	if len(linked) != 2 || !slices.ContainsFunc(linked, requests[0].Equal) || !slices.ContainsFunc(linked, requests[1].Equal) {
		t.Errorf("batch span links to %v; want the requests' %v", linked, requests)
	}
	if flushSpans[0].IsValid() || !flushSpans[1].Equal(batch.SpanContext()) {
		t.Errorf("flushes ran in spans %v; want none, then the batch's %v", flushSpans, batch.SpanContext())
	}
}
