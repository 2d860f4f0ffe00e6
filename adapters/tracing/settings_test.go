package tracing

import (
	"maps"
	"strings"
	"testing"
	"time"
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

// An endpoint that is not an absolute http:// or https:// URL with a host,
// or a timeout that is not a positive number of milliseconds, stops
// start-up with one line naming the variable: the exporter would take such
// an endpoint for localhost:4318 and export there.
func TestUnusableExportValuesAreRefusedNamingTheVariable(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT=127.0.0.1:4318: must be an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT=localhost:4318: must be an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector"}, "OTEL_EXPORTER_OTLP_ENDPOINT=collector: must be an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://"}, "OTEL_EXPORTER_OTLP_ENDPOINT=http://: must be an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http:///v1"}, "OTEL_EXPORTER_OTLP_ENDPOINT=http:///v1: must be an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "grpc://c:4317"}, "OTEL_EXPORTER_OTLP_ENDPOINT=grpc://c:4317: must be an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://me:hunter2@c"}, "OTEL_EXPORTER_OTLP_ENDPOINT=ftp://me:xxxxx@c: must be an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/?token=hunter2"}, "OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318/?xxxxx: must have no query: OTLP/HTTP sends spans without one"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces?"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://c:4318/v1/traces?: must have no query: OTLP/HTTP sends spans without one"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "c:4318/v1/traces"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=c:4318/v1/traces: must be an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, "OTEL_EXPORTER_OTLP_TIMEOUT=10s: must be a positive number of milliseconds"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "0"}, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=0: must be a positive number of milliseconds"},
	} {
		s, err := FromEnv(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }, "test")
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: loaded %v, error %v; want %q", c.env, s, err, c.want)
		}
	}
}

// One export, its retries included, ends after the traces timeout, else
// the general one, else the specification's 10 s.
func TestTheExportTimeoutIsTheOTLPTimeout(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want time.Duration
	}{
		{nil, 10 * time.Second},
		{map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "2500"}, 2500 * time.Millisecond},
		{map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "700"}, 700 * time.Millisecond},
	} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c"}
		maps.Copy(env, c.env)
		s, err := FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "test")
		if err != nil {
			t.Fatalf("%v: %v", c.env, err)
		}
		if s.timeout != c.want {
			t.Errorf("%v: timeout %v; want %v", c.env, s.timeout, c.want)
		}
	}
}

// Export headers the exporter could not parse, which it would drop with a
// log line and export without, stop start-up naming their variable and
// never their value, which carries credentials.
func TestUnparsableExportHeadersAreRefused(t *testing.T) {
	for _, c := range []struct {
		headers map[string]string
		ok      bool
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20s3cr3t,X-Tenant=plants"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=s3cr3t"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization: Bearer s3cr3t"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "api key=s3cr3t"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "api-key=s3cr3t%zz"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=s3cr3t,"}, false},
	} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}
		maps.Copy(env, c.headers)
		_, err := FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "test")
		switch {
		case c.ok && err != nil:
			t.Errorf("%v: %v", c.headers, err)
		case !c.ok && (err == nil || !strings.HasPrefix(err.Error(), "OTEL_EXPORTER_OTLP_") || strings.Contains(err.Error(), "s3cr3t")):
			t.Errorf("%v: error %v; want one naming the variable, without the value", c.headers, err)
		}
	}
}

// Resolve shows every variable in effect, defaults included, with the
// headers' values and the endpoint's password masked, or the one that turns
// tracing off.
func TestResolveShowsTheValuesInEffect(t *testing.T) {
	resolve := func(env map[string]string) map[string]Value {
		t.Helper()
		_, values, err := Resolve(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "test")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Value{}
		for _, v := range values {
			out[v.Name] = v
		}
		return out
	}
	if got := resolve(nil); len(got) != 1 || got["OTEL_EXPORTER_OTLP_ENDPOINT"].Note != "default none: tracing off" {
		t.Errorf("without an endpoint: %v", got)
	}
	if got := resolve(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_SDK_DISABLED": "true"}); got["OTEL_SDK_DISABLED"].Note != "environment: tracing off" {
		t.Errorf("disabled: %v", got)
	}
	got := resolve(map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://me:s3cr3t@c/v1/traces",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  "api-key=s3cr3t",
		"OTEL_EXPORTER_OTLP_TIMEOUT":         "2500",
		"OTEL_TRACES_SAMPLER":                "traceidratio",
	})
	for name, want := range map[string]Value{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://me:xxxxx@c/v1/traces", "environment; spans go to https://me:xxxxx@c/v1/traces"},
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "api-key=xxxxx", "environment; values masked"},
		"OTEL_EXPORTER_OTLP_TIMEOUT":         {"OTEL_EXPORTER_OTLP_TIMEOUT", "2500", "environment" + timeoutNote},
		"OTEL_EXPORTER_OTLP_PROTOCOL":        {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", "default"},
		"OTEL_TRACES_SAMPLER":                {"OTEL_TRACES_SAMPLER", "traceidratio", "environment; ratio 1 (OTEL_TRACES_SAMPLER_ARG unset)"},
		"OTEL_SERVICE_NAME":                  {"OTEL_SERVICE_NAME", "plantstore", "default"},
		"OTEL_BSP_SCHEDULE_DELAY":            {"OTEL_BSP_SCHEDULE_DELAY", "5000", "default; milliseconds between exports of finished spans"},
	} {
		if got[name] != want {
			t.Errorf("%s: %+v; want %+v", name, got[name], want)
		}
	}
}
