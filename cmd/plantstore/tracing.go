package main

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/tracing"
)

// tracingModule provides the service's trace.TracerProvider: a no-op one
// when tracing is off, so that instrumented code pays nothing, else the
// adapter's, shut down when the service stops.
func tracingModule(s *tracing.Settings) fx.Option {
	if s == nil {
		return fx.Module("tracing", fx.Provide(func() trace.TracerProvider { return noop.NewTracerProvider() }))
	}
	return fx.Module("tracing", fx.Provide(func(lc fx.Lifecycle) (trace.TracerProvider, error) {
		tp, err := tracing.NewProvider(context.Background(), s)
		if err != nil {
			return nil, err
		}
		// Stopped after every module that starts spans, since it was
		// provided before them: the last spans are exported.
		lc.Append(fx.StopHook(tp.Shutdown))
		return tp, nil
	}))
}

// optionalTracing is the tracer provider where the tracing module is wired,
// as serve wires it; without it, nothing is traced.
type optionalTracing struct {
	fx.In
	Provider trace.TracerProvider `optional:"true"`
}
