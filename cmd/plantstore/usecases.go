package main

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/httpapi"
	"github.com/plantstore/plantstore/application"
)

// scopeSettings are the scopes the use cases require.
type scopeSettings struct {
	Write scope `flag:"required-scope" default:"plants:write" empty:"off" help:"scope a create, a change or a delete needs; empty turns the check off"`
	Read  scope `flag:"read-scope" default:"plants:read" empty:"off" help:"scope a read, a list or a page of the event feed needs; empty turns the check off"`
}

// useCaseModule provides the API's use cases over the store, as
// httpapi.NewDeps builds them: a use case added to the API needs no line
// here.
var useCaseModule = fx.Module("application",
	fx.Provide(
		func(s *scopeSettings) application.Scopes {
			return application.Scopes{Read: string(s.Read), Write: string(s.Write)}
		},
		newAPIDeps,
	),
)

// apiPorts are what the API's dependencies are built from.
type apiPorts struct {
	fx.In

	Store     httpapi.Store
	Verifier  application.TokenVerifier
	Log       *slog.Logger
	Scopes    application.Scopes
	Retention application.EventRetention
	Metrics   prometheus.Registerer `optional:"true"`
	Tracing   trace.TracerProvider  `optional:"true"`
}

// newAPIDeps is every use case of the API over the store, with the
// service's verifier, logger, metrics and tracing.
func newAPIDeps(p apiPorts) httpapi.Deps {
	deps := httpapi.NewDeps(p.Store, p.Verifier, p.Log, httpapi.Policy{Scopes: p.Scopes, Retention: p.Retention})
	deps.Metrics, deps.Tracing = p.Metrics, p.Tracing
	return deps
}
