package dispatch_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/plantstore/plantstore/adapters/dispatch"
	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// Each delivery attempt has a span of its own trace, linked to the span of
// the create that committed its event, which the event kept; an attempt of
// an untraced create links to nothing. The attempt's context reaches the
// sender, which passes it on to the receiver.
func TestEveryAttemptHasASpanLinkedToItsCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recorder := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
		store := memory.New("http://a.example/hook")
		var (
			mu   sync.Mutex // attempts of different events run at once
			sent []trace.SpanContext
		)
		r := &receiver{answerCtx: func(ctx context.Context, attempt int) error {
			mu.Lock()
			sent = append(sent, trace.SpanContextFromContext(ctx))
			mu.Unlock()
			if attempt == 1 {
				return &application.DeliveryError{Outcome: "status", Status: http.StatusBadGateway}
			}
			return nil
		}}
		w := dispatch.New(fast, dispatch.Deps{Source: store, Sender: r, Tracing: tp})
		w.Start()
		defer w.Stop(context.Background())

		ctx, create := tp.Tracer("test").Start(context.Background(), "CreatePlant")
		np, _ := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: "Ivy"})
		if _, _, err := application.NewCreatePlant(store, scopes).Create(ctx, writer, np); err != nil {
			t.Fatal(err)
		}
		create.End()
		createPlant(t, store, 2) // untraced
		advance(time.Second)

		var traced, untraced []sdktrace.ReadOnlySpan
		for _, s := range recorder.Ended() {
			switch {
			case s.Name() != "webhook attempt":
			case plantOf(s) == 1:
				traced = append(traced, s)
			default:
				untraced = append(untraced, s)
			}
		}
		if len(traced) != 2 || len(untraced) != 2 {
			t.Fatalf("%d attempt spans for the traced create and %d for the other; want 2 each: a failure, a retry", len(traced), len(untraced))
		}
		for _, s := range traced {
			if s.Parent().IsValid() || len(s.Links()) != 1 || !s.Links()[0].SpanContext.Equal(create.SpanContext().WithRemote(true)) {
				t.Errorf("attempt span with parent %v and links %v; want no parent and a link to the create %v", s.Parent(), s.Links(), create.SpanContext())
			}
			if s.SpanKind() != trace.SpanKindClient {
				t.Errorf("attempt span of kind %v; want client", s.SpanKind())
			}
		}
		for _, s := range untraced {
			if len(s.Links()) != 0 {
				t.Errorf("untraced create's attempt links to %v", s.Links())
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, sc := range sent {
			if !sc.IsValid() {
				t.Errorf("an attempt reached the sender without its span")
			}
		}
	})
}

// plantOf is the plant an attempt's span says it delivered.
func plantOf(s sdktrace.ReadOnlySpan) int64 {
	for _, a := range s.Attributes() {
		if a.Key == "plantstore.plant_id" {
			return a.Value.AsInt64()
		}
	}
	return -1
}
