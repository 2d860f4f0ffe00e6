package httpapi

import (
	"fmt"
	"log/slog"
	"reflect"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/application"
)

// Deps are what the API is built from: one use case per operation, the token
// verifier, the logger and where metrics are registered. fx fills it by type;
// tests fill it by hand. An operation added to the API adds one field here,
// typed by the port its handler declares, and nothing else in this file: New
// refuses a Deps whose use case is nil, and the adapter's tests fail until
// the field has a route and a span (see useCaseFields).
type Deps struct {
	fx.In

	Create CreateUseCase
	Get    GetUseCase
	List   ListUseCase
	Delete DeleteUseCase
	Change ChangeUseCase
	Events EventsUseCase

	Verifier application.TokenVerifier
	Log      *slog.Logger
	// Metrics, when not nil, registers the adapter's metrics.
	Metrics prometheus.Registerer `optional:"true"`
	// Tracing, when neither nil nor a no-op, traces every request and the
	// use case it calls.
	Tracing trace.TracerProvider `optional:"true"`
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
