package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/plantstore/plantstore/adapters/tracing"
	"github.com/plantstore/plantstore/adapters/tracing/otlptest"
)

// One create's trace, as a collector receives it by OTLP, on each store:
// the request's server span continues the caller's traceparent; the use
// case's span is its child; the batch commit that carried the create has a
// span of its own linked to the use case's (it served other requests too);
// and the webhook attempt, later, has a span of its own trace linked to the
// create's. The access line names the trace.
//
// Sampling every trace, or none but those the caller sampled (as a ratio
// keeps the rare one it samples), the trace is the same.
func TestATracedCreateLeadsToItsBatchAndDelivery(t *testing.T) {
	for name, sampler := range map[string][2]string{
		"always_on":                  {"always_on", ""},
		"sampled by the caller only": {"parentbased_traceidratio", "0"},
	} {
		t.Run(name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, db string) { traceOneCreate(t, db, sampler[0], sampler[1]) })
		})
	}
}

func traceOneCreate(t *testing.T, db, sampler, ratio string) {
	collector := otlptest.NewReceiver(t)
	h := newHooks(t)
	hook := h.receiver(t)
	env := h.env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
		"OTEL_TRACES_SAMPLER":         sampler,
		"OTEL_TRACES_SAMPLER_ARG":     ratio,
		"OTEL_SERVICE_NAME":           "plantstore-test",
		"OTEL_BSP_SCHEDULE_DELAY":     "20",
	}, hook.URL)
	traces, err := tracing.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "test")
	require.NoError(t, err)
	s := startService(t, db, env, tracingModule(traces))

	const caller, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	s.do(t, "POST", "/plants", map[string]string{
		"Authorization": "Bearer " + s.token(t, nil),
		"Content-Type":  "application/json",
		"traceparent":   "00-" + caller + "-" + callerSpan + "-01",
	}, []byte(`{"id":7,"name":"Fern"}`)).expect(t, 200, "")
	hook.WaitDeliveries(t, 1, 10*time.Second)
	// The request's span ends after its answer, maybe after the delivery:
	// every one is waited for.
	require.Eventually(t, func() bool {
		return collector.Received("POST /plants", "CreatePlant", "batch commit", "webhook attempt")
	}, 10*time.Second, 10*time.Millisecond, "the spans of the request, use case, batch and attempt exported")

	requests := collector.Named("POST /plants")
	require.Len(t, requests, 1, "request spans")
	request := requests[0]
	require.Equal(t, []string{caller, callerSpan, "plantstore-test"}, []string{request.TraceID, request.ParentID, request.Service}, "the request continues the caller's trace")
	require.Equal(t, tracepb.Span_SPAN_KIND_SERVER, request.Kind)

	useCases := collector.Named("CreatePlant")
	require.Len(t, useCases, 1, "use case spans")
	useCase := useCases[0]
	require.Equal(t, []string{caller, request.SpanID}, []string{useCase.TraceID, useCase.ParentID}, "the use case is the request's child")
	create := useCase.Ref()

	batch := otlptest.LinkedTo(t, collector.Named("batch commit"), create)
	require.Empty(t, batch.ParentID, "a batch has no parent: it serves many requests")
	require.NotEqual(t, caller, batch.TraceID)

	attempt := otlptest.LinkedTo(t, collector.Named("webhook attempt"), create)
	require.Empty(t, attempt.ParentID, "an attempt is a trace of its own")
	require.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, attempt.Kind)
	require.Contains(t, s.logs.String(), `"trace_id":"`+caller+`"`, "the access line names the trace")
}
