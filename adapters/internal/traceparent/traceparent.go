// Package traceparent carries a trace context through storage as the W3C
// traceparent text: the stores keep a create's with its events, and the
// dispatcher links each delivery attempt's span to it.
package traceparent

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/plantstore/plantstore/application"
)

// header is the propagation field.
const header = "traceparent"

// From is the traceparent of the sampled span in ctx, "" when there is none,
// as there never is with tracing off: storing it then costs nothing.
func From(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsSampled() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier[header]
}

// Link is the span link to the span that tp names, false when tp is empty or
// not a valid traceparent.
func Link(tp string) (trace.Link, bool) {
	if tp == "" {
		return trace.Link{}, false
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{header: tp})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return trace.Link{}, false
	}
	return trace.Link{SpanContext: sc}, true
}

// Keep is rec with the traceparent of the create running in ctx, unless it
// has one already: the store keeps it with the plant's events.
func Keep(ctx context.Context, rec application.Record) application.Record {
	if rec.TraceParent == "" {
		rec.TraceParent = From(ctx)
	}
	return rec
}
