package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// NewProvider is the SDK's tracer provider for s: it samples as s says and
// exports by OTLP/HTTP in batches. The caller shuts it down after the last
// span has ended, so that the last spans are exported.
func NewProvider(ctx context.Context, s *Settings) (*sdktrace.TracerProvider, error) {
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(s.endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	var batch []sdktrace.BatchSpanProcessorOption // the SDK's defaults but for the delay, when set
	if s.delay != 0 {
		batch = append(batch, sdktrace.WithBatchTimeout(s.delay))
	}
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exporter, batch...),
		sdktrace.WithSampler(s.sampler),
		sdktrace.WithResource(s.resource),
	), nil
}
