package webhook

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// An attempt made in a sampled span sends its traceparent, so that the
// receiver may continue the attempt's trace; an untraced one sends none
// (the exact set of headers is pinned by TestSendDeliversASignedPlant).
func TestATracedAttemptSendsItsTraceparent(t *testing.T) {
	ctx, span := sdktrace.NewTracerProvider().Tracer("test").Start(context.Background(), "webhook attempt")
	defer span.End()
	rc := newReceiver(t, nil)
	if err := newSender(t, Config{}).Send(ctx, event(t, rc.URL)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	sc := span.SpanContext()
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	if got := rc.only(t).header.Get("Traceparent"); got != want {
		t.Errorf("traceparent %q; want %q", got, want)
	}
}
