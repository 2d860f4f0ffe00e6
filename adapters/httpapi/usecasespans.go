package httpapi

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// traceUseCases wraps every use case the API calls in a span of its own, a
// child of the request's, when tracing is on. The application stays free of
// tracing: its spans are started here, around the ports it implements. New
// has refused a Deps with a use case missing, so each is wrapped as it is; a
// use case added to Deps needs its line here, or
// TestEveryUseCaseHasARouteAndASpan fails.
func traceUseCases(d *Deps, tracer trace.Tracer) {
	d.Create = tracedCreate{d.Create, tracer}
	d.Get = tracedGet{d.Get, tracer}
	d.List = tracedList{d.List, tracer}
	d.Delete = tracedDelete{d.Delete, tracer}
	d.Change = tracedChange{d.Change, tracer}
	d.Events = tracedEvents{d.Events, tracer}
}

type tracedCreate struct {
	CreateUseCase
	tracer trace.Tracer
}

func (t tracedCreate) Create(ctx context.Context, p application.Principal, np domain.NewPlant) (domain.Plant, application.Outcome, error) {
	if !recording(ctx) {
		return t.CreateUseCase.Create(ctx, p, np)
	}
	ctx, span := useCaseSpan(ctx, t.tracer, "CreatePlant")
	span.SetAttributes(attribute.Int64("plantstore.plant_id", int64(np.ID)))
	plant, outcome, err := t.CreateUseCase.Create(ctx, p, np)
	span.SetAttributes(attribute.Bool("plantstore.replayed", outcome == application.Replayed))
	endUseCase(span, err)
	return plant, outcome, err
}

type tracedGet struct {
	GetUseCase
	tracer trace.Tracer
}

func (t tracedGet) Get(ctx context.Context, p application.Principal, id domain.ID) (domain.Plant, error) {
	if !recording(ctx) {
		return t.GetUseCase.Get(ctx, p, id)
	}
	ctx, span := useCaseSpan(ctx, t.tracer, "GetPlant")
	plant, err := t.GetUseCase.Get(ctx, p, id)
	endUseCase(span, err)
	return plant, err
}

type tracedList struct {
	ListUseCase
	tracer trace.Tracer
}

func (t tracedList) List(ctx context.Context, p application.Principal, q application.ListQuery) (application.Page, error) {
	if !recording(ctx) {
		return t.ListUseCase.List(ctx, p, q)
	}
	ctx, span := useCaseSpan(ctx, t.tracer, "ListPlants")
	page, err := t.ListUseCase.List(ctx, p, q)
	endUseCase(span, err)
	return page, err
}

type tracedDelete struct {
	DeleteUseCase
	tracer trace.Tracer
}

func (t tracedDelete) Delete(ctx context.Context, p application.Principal, id domain.ID, pre application.Precondition) error {
	if !recording(ctx) {
		return t.DeleteUseCase.Delete(ctx, p, id, pre)
	}
	ctx, span := useCaseSpan(ctx, t.tracer, "DeletePlant")
	err := t.DeleteUseCase.Delete(ctx, p, id, pre)
	endUseCase(span, err)
	return err
}

type tracedChange struct {
	ChangeUseCase
	tracer trace.Tracer
}

func (t tracedChange) Change(ctx context.Context, p application.Principal, id domain.ID, c application.PlantChange, pre application.Precondition) (domain.Plant, error) {
	if !recording(ctx) {
		return t.ChangeUseCase.Change(ctx, p, id, c, pre)
	}
	ctx, span := useCaseSpan(ctx, t.tracer, "ChangePlant")
	plant, err := t.ChangeUseCase.Change(ctx, p, id, c, pre)
	endUseCase(span, err)
	return plant, err
}

type tracedEvents struct {
	EventsUseCase
	tracer trace.Tracer
}

func (t tracedEvents) List(ctx context.Context, p application.Principal, q application.FeedQuery) (application.EventPage, error) {
	if !recording(ctx) {
		return t.EventsUseCase.List(ctx, p, q)
	}
	ctx, span := useCaseSpan(ctx, t.tracer, "ListEvents")
	page, err := t.EventsUseCase.List(ctx, p, q)
	span.SetAttributes(attribute.Int("plantstore.events", page.Count))
	endUseCase(span, err)
	return page, err
}
