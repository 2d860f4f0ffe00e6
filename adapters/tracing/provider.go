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
//
// One export, its retries included, ends at the timeout: the exporter's
// own timeout bounds each request only, and against a collector that never
// answers its retries would go on to the batch processor's limit, 30 s by
// default (OTEL_BSP_EXPORT_TIMEOUT, which this replaces).
func NewProvider(ctx context.Context, s *Settings) (*sdktrace.TracerProvider, error) {
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(s.endpoint), otlptracehttp.WithTimeout(s.timeout))
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	// The SDK's defaults but for the export timeout, and the delay when set.
	batch := []sdktrace.BatchSpanProcessorOption{sdktrace.WithExportTimeout(s.timeout)}
	if s.delay != 0 {
		batch = append(batch, sdktrace.WithBatchTimeout(s.delay))
	}
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exporter, batch...),
		sdktrace.WithSampler(s.sampler),
		sdktrace.WithResource(s.resource),
	), nil
}
