package groupcommit

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the spans of batch commits.
const tracerName = "github.com/plantstore/plantstore/adapters/internal/groupcommit"

// submitter is the span of the submitter of an item, kept when it is
// sampled: its batch's span links to it. A batch serves many requests, so no
// one of them is its parent.
func submitter(ctx context.Context) trace.Span {
	if span := trace.SpanFromContext(ctx); span.SpanContext().IsSampled() {
		return span
	}
	return nil
}

// startBatch starts the span of one flush, linked to the span of every
// traced submitter it serves, with the tracer provider theirs came from: a
// batch of untraced items, as every batch is with tracing off, has no span
// and costs nothing.
func (w *writer[T, R]) startBatch(ctx context.Context) (context.Context, trace.Span) {
	var links []trace.Link
	var tp trace.TracerProvider
	for _, r := range w.reqs {
		if r.span != nil {
			if tp == nil {
				tp = r.span.TracerProvider()
			}
			links = append(links, trace.Link{SpanContext: r.span.SpanContext()})
		}
	}
	if tp == nil {
		return ctx, nil
	}
	return tp.Tracer(tracerName).Start(ctx, "batch commit",
		trace.WithNewRoot(), trace.WithLinks(links...),
		trace.WithAttributes(attribute.Int("plantstore.batch.size", len(w.reqs))))
}
