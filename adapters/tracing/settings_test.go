package tracing

import (
	"strings"
	"testing"
)

// Tracing is off unless an endpoint is set, and the standard variables
// turn it off, choose its sampler, or stop start-up when they cannot be
// honoured.
func TestTracingIsConfiguredByTheOTELVariables(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want string // the start-up line's description; "" for an error
	}{
		{"off by default", nil, "off"},
		{"base endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}, "http://c:4318/v1/traces ParentBased{root:AlwaysOnSampler,remoteParentSampled:AlwaysOnSampler,remoteParentNotSampled:AlwaysOffSampler,localParentSampled:AlwaysOnSampler,localParentNotSampled:AlwaysOffSampler}+FollowLinks"},
		{"traces endpoint wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t/x", "OTEL_TRACES_SAMPLER": "always_on"}, "http://t/x AlwaysOnSampler+FollowLinks"},
		{"one percent", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.01"}, "http://c/v1/traces TraceIDRatioBased{0.01}+FollowLinks"},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_EXPORTER": "none"}, "off"},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_SDK_DISABLED": "true"}, "off"},
		{"unknown sampler", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_SAMPLER": "jaeger_remote"}, ""},
		{"bad ratio", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ""},
		{"grpc traces", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, ""},
		{"zipkin", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_EXPORTER": "zipkin"}, ""},
		{"bad delay", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_BSP_SCHEDULE_DELAY": "soon"}, ""},
		{"bad resource", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_RESOURCE_ATTRIBUTES": "novalue"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := FromEnv(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }, "test")
			switch {
			case c.want == "" && err == nil:
				t.Fatalf("loaded %v; want an error", s)
			case c.want == "":
				if !strings.HasPrefix(err.Error(), "OTEL_") {
					t.Errorf("error %q does not name its variable", err)
				}
			case err != nil:
				t.Fatalf("error %v", err)
			case s.String() != c.want:
				t.Errorf("described as %q; want %q", s.String(), c.want)
			}
		})
	}
}
