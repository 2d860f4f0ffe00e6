package tracing

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// At any ratio, a root span linked to a sampled span is sampled, so that a
// sampled create's batch commit and delivery attempts are kept with it; a
// root span without such a link is left to the ratio.
func TestASampledCreatesBatchAndAttemptsAreSampled(t *testing.T) {
	never := followLinks{sdktrace.TraceIDRatioBased(0)}
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled})
	unsampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{2}, SpanID: trace.SpanID{2}})
	for name, c := range map[string]struct {
		links []trace.Link
		want  sdktrace.SamplingDecision
	}{
		"linked to a sampled span":  {[]trace.Link{{SpanContext: unsampled}, {SpanContext: sampled}}, sdktrace.RecordAndSample},
		"linked to unsampled spans": {[]trace.Link{{SpanContext: unsampled}}, sdktrace.Drop},
		"without links":             {nil, sdktrace.Drop},
	} {
		got := never.ShouldSample(sdktrace.SamplingParameters{ParentContext: context.Background(), TraceID: trace.TraceID{3}, Links: c.links})
		if got.Decision != c.want {
			t.Errorf("%s: decision %v; want %v", name, got.Decision, c.want)
		}
	}
}
