package traceparent

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// A sampled span's traceparent comes back as a link to that span; no span,
// an unsampled one, or text that is not a traceparent give nothing.
func TestATraceParentLinksBackToItsSpan(t *testing.T) {
	ctx, span := sdktrace.NewTracerProvider().Tracer("test").Start(context.Background(), "create")
	defer span.End()
	tp := From(ctx)
	link, ok := Link(tp)
	if !ok || !link.SpanContext.Equal(span.SpanContext().WithRemote(true)) {
		t.Errorf("link from %q is %v, %v; want the span %v", tp, link.SpanContext, ok, span.SpanContext())
	}
	unsampled, unsampledSpan := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())).Tracer("test").Start(context.Background(), "x")
	defer unsampledSpan.End()
	for name, c := range map[string]context.Context{"none": context.Background(), "unsampled": unsampled} {
		if got := From(c); got != "" {
			t.Errorf("%s: traceparent %q; want none", name, got)
		}
	}
	for _, bad := range []string{"", "00-zz-00-01", "00-00000000000000000000000000000000-0000000000000000-01"} {
		if _, ok := Link(bad); ok {
			t.Errorf("Link(%q) gave a link", bad)
		}
	}
}
