package httpapi

import (
	"context"
	"errors"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracerName names the spans this adapter starts.
const tracerName = "github.com/plantstore/plantstore/adapters/httpapi"

// traceContext is the W3C traceparent and tracestate: how a caller's trace
// continues in this service.
var traceContext propagation.TraceContext

// newTracer is the adapter's tracer, nil when tracing is off (no provider,
// or a no-op one), so that the request path then does no tracing work at
// all: not even the context a no-op span would be carried in.
func newTracer(tp trace.TracerProvider) trace.Tracer {
	switch tp.(type) {
	case nil, noop.TracerProvider:
		return nil
	}
	return tp.Tracer(tracerName)
}

// startRequest starts the request's server span, the child of the caller's
// traceparent if it sent one. Its name is set once the route is known.
func (a *API) startRequest(r *http.Request) (*http.Request, trace.Span) {
	ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := a.tracer.Start(ctx, spanMethod(r.Method), trace.WithSpanKind(trace.SpanKindServer))
	// Attributes only for a span that is kept: sampling at 1 %, the other
	// 99 % of requests cost as little as the sampler allows.
	if span.IsRecording() {
		method := attribute.String("http.request.method", r.Method)
		if spanMethod(r.Method) == otherMethod {
			method = attribute.String("http.request.method", "_OTHER")
			span.SetAttributes(attribute.String("http.request.method_original", r.Method))
		}
		span.SetAttributes(method, attribute.String("url.path", logPath(r)))
	}
	return r.WithContext(ctx), span
}

// otherMethod names the span of a request whose method HTTP does not
// define, as OpenTelemetry's HTTP conventions ask, so that span names stay
// a closed set whatever clients send; the method is kept as an attribute.
const otherMethod = "HTTP"

// spanMethod is the method part of a server span's name.
func spanMethod(m string) string {
	if methodLabel(m) == "OTHER" {
		return otherMethod
	}
	return m
}

// endRequest names the span after its route, as the access line does, and
// ends it with the answer's status; a 5xx marks it failed.
func endRequest(span trace.Span, method, route string, status int, requestID string) {
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetName(spanMethod(method) + " " + route)
	span.SetAttributes(
		attribute.String("http.route", route),
		attribute.Int("http.response.status_code", status),
		attribute.String("plantstore.request_id", requestID),
	)
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// traceID is the request's trace id for the access line, "" when the
// request is not traced.
func traceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}

// recording reports whether the request in ctx is traced and sampled: a use
// case of a request that is not gets no span of its own.
func recording(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }

// useCaseSpan starts the span of one use case, a child of the request's.
func useCaseSpan(ctx context.Context, tracer trace.Tracer, name string) (context.Context, trace.Span) {
	return tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
}

// endUseCase ends a use case's span, recording its error: one the client
// caused (a refusal) is still an answer, so it is an attribute, not a
// failure; one answered 5xx (the store unavailable or late, a fault) marks
// the span failed, as it marks the request's.
func endUseCase(span trace.Span, err error) {
	if err != nil {
		span.SetAttributes(attribute.String("plantstore.error", err.Error()))
		if p, _ := classify(err); p.status >= 500 && !errors.Is(err, context.Canceled) {
			span.SetStatus(codes.Error, http.StatusText(p.status))
		}
	}
	span.End()
}
