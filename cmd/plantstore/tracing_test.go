package main

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// serve --help names the OTEL_* variables the service honours.
func TestServeHelpNamesTheOpenTelemetryVariables(t *testing.T) {
	var out, errs strings.Builder
	if code := run(t.Context(), []string{"serve", "--help"}, noEnv, &out, &errs); code != 0 {
		t.Fatalf("serve --help exited %d: %s", code, errs.String())
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_SERVICE_NAME", "OTEL_TRACES_EXPORTER"} {
		if !strings.Contains(out.String(), v) {
			t.Errorf("serve --help lacks %s", v)
		}
	}
}

// Tracing is off unless an endpoint is set, and the standard variables
// turn it off, choose its sampler, or stop start-up when they cannot be
// honoured.
func TestTracingIsConfiguredByTheOTELVariables(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      map[string]string
		want     string // the start-up line's description; "" for an error
		endpoint string
	}{
		{"off by default", nil, "off", ""},
		{"base endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}, "http://c:4318/v1/traces ParentBased{root:AlwaysOnSampler,remoteParentSampled:AlwaysOnSampler,remoteParentNotSampled:AlwaysOffSampler,localParentSampled:AlwaysOnSampler,localParentNotSampled:AlwaysOffSampler}+FollowLinks", "http://c:4318/v1/traces"},
		{"traces endpoint wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t/x", "OTEL_TRACES_SAMPLER": "always_on"}, "http://t/x AlwaysOnSampler+FollowLinks", "http://t/x"},
		{"one percent", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.01"}, "http://c/v1/traces TraceIDRatioBased{0.01}+FollowLinks", ""},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_EXPORTER": "none"}, "off", ""},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_SDK_DISABLED": "true"}, "off", ""},
		{"unknown sampler", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_SAMPLER": "jaeger_remote"}, "", ""},
		{"bad ratio", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, "", ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "", ""},
		{"zipkin", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_EXPORTER": "zipkin"}, "", ""},
		{"bad delay", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_BSP_SCHEDULE_DELAY": "soon"}, "", ""},
		{"bad resource", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_RESOURCE_ATTRIBUTES": "novalue"}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := loadTracing(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
			switch {
			case c.want == "" && err == nil:
				t.Fatalf("loaded %v; want an error", tr)
			case c.want == "":
				if !strings.HasPrefix(err.Error(), "OTEL_") {
					t.Errorf("error %q does not name its variable", err)
				}
			case err != nil:
				t.Fatalf("error %v", err)
			case tr.String() != c.want:
				t.Errorf("described as %q; want %q", tr.String(), c.want)
			}
		})
	}
}

// At any ratio, a root span linked to a sampled span is sampled, so that a
// sampled create's batch commit and delivery attempts are kept with it; a
// root span without such a link is left to the ratio.
func TestASampledCreatesBatchAndAttemptsAreSampled(t *testing.T) {
	never := followLinks{sdktrace.TraceIDRatioBased(0)}
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled})
	unsampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{2}, SpanID: trace.SpanID{2}})
	for name, c := range map[string]struct {
		links []trace.Link
		want  sdktrace.SamplingDecision
	}{
		"linked to a sampled span":  {[]trace.Link{{SpanContext: unsampled}, {SpanContext: sampled}}, sdktrace.RecordAndSample},
		"linked to unsampled spans": {[]trace.Link{{SpanContext: unsampled}}, sdktrace.Drop},
		"without links":             {nil, sdktrace.Drop},
	} {
		got := never.ShouldSample(sdktrace.SamplingParameters{ParentContext: context.Background(), TraceID: trace.TraceID{3}, Links: c.links})
		if got.Decision != c.want {
			t.Errorf("%s: decision %v; want %v", name, got.Decision, c.want)
		}
	}
}
