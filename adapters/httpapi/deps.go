package httpapi

import (
	"fmt"
	"log/slog"
	"reflect"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/plantstore/plantstore/application"
)

// Deps are what the API is built from: one use case per operation, the token
// verifier, the logger and where metrics are registered. NewDeps fills it
// with every use case over a store; a test may replace one field. An
// operation added to the API adds one field here, typed by the port its
// handler declares, and its line in NewDeps: New refuses a Deps whose use
// case is nil, TestNewDepsGivesEveryUseCase names the line NewDeps lacks,
// and the adapter's tests fail until the field has a route and a span (see
// useCaseFields).
type Deps struct {
	Create CreateUseCase
	Get    GetUseCase
	List   ListUseCase
	Delete DeleteUseCase
	Change ChangeUseCase
	Events EventsUseCase

	Verifier application.TokenVerifier
	Log      *slog.Logger
	// Metrics, when not nil, registers the adapter's metrics.
	Metrics prometheus.Registerer
	// Tracing, when neither nil nor a no-op, traces every request and the
	// use case it calls.
	Tracing trace.TracerProvider
}

// Store is every store port the API's use cases read and write through,
// which every store adapter serves. A use case that needs another port adds
// it here, so that NewDeps can hand it over.
type Store interface {
	application.PlantInserter
	application.PlantFinder
	application.PlantLister
	application.PlantUpdater
	application.PlantDeleter
	application.EventFeed
}

// Policy is what the use cases are configured with besides their ports.
type Policy struct {
	// Scopes are the scopes a caller needs to write and to read.
	Scopes application.Scopes
	// Retention is how long the event feed keeps events, by which its
	// cursors are judged; zero is application.DefaultEventRetention.
	Retention application.EventRetention
}

// NewDeps is a Deps with every use case of the API over store, and
// verifier and log; Metrics and Tracing are left for the caller to set.
// It is the one place that knows which use case serves which operation, so
// that whoever serves the API (the service's wiring, its tests, a program
// of its own) gets the operations of the API it builds against, a new one
// included, without naming them.
func NewDeps(store Store, verifier application.TokenVerifier, log *slog.Logger, policy Policy) Deps {
	scopes, retention := policy.Scopes, policy.Retention
	if retention == 0 {
		retention = application.DefaultEventRetention
	}
	return Deps{
		Create: application.NewCreatePlant(store, scopes),
		Get:    application.NewGetPlant(store, scopes),
		List:   application.NewListPlants(store, scopes),
		Delete: application.NewDeletePlant(store, store, scopes),
		Change: application.NewChangePlant(store, scopes),
		Events: application.NewListEvents(store, scopes, retention),

		Verifier: verifier,
		Log:      log,
	}
}

// useCaseFields are the fields of Deps that hold use cases: those typed by an
// interface this package declares, the port a handler calls. The other
// dependencies (verifier, logger, metrics, tracing) have types from other
// packages. Finding the use cases by their type rather than from a list is
// what lets a field added to Deps be checked without another edit.
var useCaseFields = func() []reflect.StructField {
	deps := reflect.TypeFor[Deps]()
	var fields []reflect.StructField
	for i := range deps.NumField() {
		f := deps.Field(i)
		if f.Type.Kind() == reflect.Interface && f.Type.PkgPath() == deps.PkgPath() {
			fields = append(fields, f)
		}
	}
	return fields
}()

// missingUseCases names every use case d leaves nil. A missing use case
// would otherwise leave its operation answering nothing sensible; refusing it
// makes a wiring mistake fail at start-up, and in the tests that build the
// API, instead of on the first request.
func missingUseCases(d Deps) error {
	v := reflect.ValueOf(d)
	var missing []string
	for _, f := range useCaseFields {
		if v.FieldByIndex(f.Index).IsNil() {
			missing = append(missing, "Deps."+f.Name)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("httpapi: %s is missing", missing[0])
	}
	return fmt.Errorf("httpapi: %s are missing", strings.Join(missing, ", "))
}
