package main

import (
	"context"
	"log/slog"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/tracing"
)

// tracingModule provides the service's trace.TracerProvider: a no-op one
// when tracing is off, so that instrumented code pays nothing, else the
// adapter's, its library reporting to the service's log, shut down when
// the service stops.
func tracingModule(s *tracing.Settings) fx.Option {
	if s == nil {
		return fx.Module("tracing", fx.Provide(func() trace.TracerProvider { return noop.NewTracerProvider() }))
	}
	return fx.Module("tracing", fx.Provide(func(lc fx.Lifecycle, grace *gracePeriod, log *slog.Logger) (trace.TracerProvider, error) {
		tracing.LogTo(log)
		tp, err := tracing.NewProvider(context.Background(), s)
		if err != nil {
			return nil, err
		}
		// Stopped after every module that starts spans, since it was
		// provided before them: the last spans are exported.
		lc.Append(fx.StopHook(func(ctx context.Context) { flushTraces(ctx, tp, grace, log) }))
		return tp, nil
	}))
}

// flushTraces exports the last spans within what is left of the grace
// period, and drops those a collector did not take by then: a collector
// that never answers neither holds the stop past the grace period nor
// fails it, since the service's work is done.
func flushTraces(ctx context.Context, tp *sdktrace.TracerProvider, grace *gracePeriod, log *slog.Logger) {
	ctx, cancel := grace.within(ctx)
	defer cancel()
	switch err := tp.Shutdown(ctx); {
	case err != nil && ctx.Err() != nil:
		log.Warn("spans not exported by the end of the grace period dropped", "error", err.Error())
	case err != nil:
		log.Warn("tracing did not shut down cleanly", "error", err.Error())
	}
}

// optionalTracing is the tracer provider where the tracing module is wired,
// as serve wires it; without it, nothing is traced.
type optionalTracing struct {
	fx.In
	Provider trace.TracerProvider `optional:"true"`
}
