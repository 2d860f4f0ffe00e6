package dispatch

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/plantstore/plantstore/adapters/internal/traceparent"
	"github.com/plantstore/plantstore/application"
)

// tracerName names the spans of delivery attempts.
const tracerName = "github.com/plantstore/plantstore/adapters/dispatch"

// newTracer is the worker's tracer, nil when tracing is off.
func newTracer(tp trace.TracerProvider) trace.Tracer {
	switch tp.(type) {
	case nil, noop.TracerProvider:
		return nil
	}
	return tp.Tracer(tracerName)
}

// startAttempt starts the span of one attempt to deliver e: a trace of its
// own, since it happens later than the create and maybe on another replica,
// linked to the create's span that the event kept. The sender passes the
// attempt's context on to the receiver.
func (w *Worker) startAttempt(ctx context.Context, e application.Event) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{
		trace.WithNewRoot(),
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("plantstore.event_id", e.ID),
			attribute.String("url.full", loggedURL(e.URL)),
			attribute.Int64("plantstore.plant_id", int64(e.PlantID)),
			attribute.Int("plantstore.attempt", e.Attempts+1),
		),
	}
	if link, ok := traceparent.Link(e.TraceParent); ok {
		opts = append(opts, trace.WithLinks(link))
	}
	return w.tracer.Start(ctx, "webhook attempt", opts...)
}

// endAttempt ends an attempt's span with its outcome.
func endAttempt(span trace.Span, err error) {
	span.SetAttributes(attribute.String("plantstore.outcome", application.AttemptOutcome(err)))
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
