package main

import (
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/httpapi"
	"github.com/plantstore/plantstore/application"
)

// scopeSettings are the scopes the use cases require.
type scopeSettings struct {
	Write scope `flag:"required-scope" default:"plants:write" empty:"off" help:"scope a create, a change or a delete needs; empty turns the check off"`
	Read  scope `flag:"read-scope" default:"plants:read" empty:"off" help:"scope a read, a list or a page of the event feed needs; empty turns the check off"`
}

// useCaseModule provides the application's use cases, each bound to the
// port its inbound adapter declares: one line per use case.
var useCaseModule = fx.Module("application",
	fx.Provide(
		func(s *scopeSettings) application.Scopes {
			return application.Scopes{Read: string(s.Read), Write: string(s.Write)}
		},
		fx.Annotate(application.NewCreatePlant, fx.As(new(httpapi.CreateUseCase))),
		fx.Annotate(application.NewGetPlant, fx.As(new(httpapi.GetUseCase))),
		fx.Annotate(application.NewListPlants, fx.As(new(httpapi.ListUseCase))),
		fx.Annotate(application.NewDeletePlant, fx.As(new(httpapi.DeleteUseCase))),
		fx.Annotate(application.NewChangePlant, fx.As(new(httpapi.ChangeUseCase))),
		fx.Annotate(application.NewListEvents, fx.As(new(httpapi.EventsUseCase))),
	),
)
