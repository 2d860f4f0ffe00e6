package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/fx"
)

// tracingHelp is the section of `serve --help` on tracing: it is configured
// by the standard OpenTelemetry variables, not by PLANTSTORE_* settings, so
// that an operator's usual collector setup applies unchanged.
const tracingHelp = `Tracing (OpenTelemetry, off unless an OTLP endpoint is set):
  OTEL_EXPORTER_OTLP_ENDPOINT         OTLP/HTTP base URL; traces go to its /v1/traces (default none: tracing off)
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  full OTLP/HTTP URL of traces; wins over the above
  OTEL_EXPORTER_OTLP_PROTOCOL         http/protobuf (the only one served; default http/protobuf)
  OTEL_EXPORTER_OTLP_HEADERS          headers sent with every export, key=value,... (read by the exporter)
  OTEL_TRACES_EXPORTER                otlp or none (default otlp once an endpoint is set)
  OTEL_TRACES_SAMPLER                 always_on, always_off, traceidratio, parentbased_always_on,
                                      parentbased_always_off, parentbased_traceidratio (default parentbased_always_on)
  OTEL_TRACES_SAMPLER_ARG             the ratio of the traceidratio samplers, 0 to 1 (default 1)
  OTEL_SERVICE_NAME                   service.name of the spans (default plantstore)
  OTEL_RESOURCE_ATTRIBUTES            more resource attributes, key=value,...
  OTEL_BSP_SCHEDULE_DELAY             milliseconds between exports of finished spans (default 5000)
  OTEL_SDK_DISABLED                   true turns tracing off whatever else is set
`

// tracingSettings are read from the OTEL_* variables.
type tracingSettings struct {
	endpoint  string // full URL of the traces endpoint; empty when off
	sampler   sdktrace.Sampler
	delay     time.Duration // between exports; 0: the SDK's default
	resource  *resource.Resource
	described string // for the start-up line
}

// loadTracing reads the OTEL_* variables. Tracing is off (nil settings)
// without an endpoint, with OTEL_TRACES_EXPORTER=none or
// OTEL_SDK_DISABLED=true; a value it cannot honour is an error that stops
// start-up, as a bad PLANTSTORE_* setting does.
func loadTracing(getenv func(string) (string, bool)) (*tracingSettings, error) {
	env := func(k string) string { v, _ := getenv(k); return strings.TrimSpace(v) }
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	switch exp := env("OTEL_TRACES_EXPORTER"); exp {
	case "", "otlp":
	case "none":
		return nil, nil
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: only otlp and none are served", exp)
	}
	if p := env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); p != "" && p != "http/protobuf" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=%s: only http/protobuf is served", p)
	}
	if p := env("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: only http/protobuf is served", p)
	}
	endpoint := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		if base := env("OTEL_EXPORTER_OTLP_ENDPOINT"); base != "" {
			endpoint = strings.TrimSuffix(base, "/") + "/v1/traces"
		}
	}
	if endpoint == "" {
		return nil, nil
	}
	configured, err := loadSampler(env("OTEL_TRACES_SAMPLER"), env("OTEL_TRACES_SAMPLER_ARG"))
	if err != nil {
		return nil, err
	}
	sampler := followLinks{configured}
	name := env("OTEL_SERVICE_NAME")
	if name == "" {
		name = "plantstore"
	}
	attrs, err := resourceAttributes(env("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return nil, err
	}
	res := resource.NewSchemaless(append(attrs, semconv.ServiceName(name), semconv.ServiceVersion(buildVersion()))...)
	var delay time.Duration
	if v := env("OTEL_BSP_SCHEDULE_DELAY"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("OTEL_BSP_SCHEDULE_DELAY=%s: must be a positive number of milliseconds", v)
		}
		delay = time.Duration(ms) * time.Millisecond
	}
	return &tracingSettings{endpoint: endpoint, sampler: sampler, resource: res, delay: delay,
		described: sampler.Description()}, nil
}

// loadSampler is OTEL_TRACES_SAMPLER with its argument, as the
// specification names them.
func loadSampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := 1.0
	if arg != "" && strings.HasSuffix(name, "traceidratio") {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%s: must be a ratio from 0 to 1", arg)
		}
		ratio = r
	}
	switch name {
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%s: not a sampler this service knows", name)
}

// resourceAttributes parses OTEL_RESOURCE_ATTRIBUTES: key=value pairs,
// comma-separated, values percent-encoded.
func resourceAttributes(raw string) ([]attribute.KeyValue, error) {
	var attrs []attribute.KeyValue
	if raw == "" {
		return attrs, nil
	}
	for kv := range strings.SplitSeq(raw, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		value, err := url.PathUnescape(strings.TrimSpace(v))
		if !ok || k == "" || err != nil {
			return nil, errors.New("OTEL_RESOURCE_ATTRIBUTES: must be key=value pairs, comma-separated")
		}
		attrs = append(attrs, attribute.String(k, value))
	}
	return attrs, nil
}

// String describes the settings for the start-up line: off, or where spans
// go and how they are sampled.
func (t *tracingSettings) String() string {
	if t == nil {
		return "off"
	}
	return t.endpoint + " " + t.described
}

// tracingModule provides the service's trace.TracerProvider: a no-op one
// when tracing is off, so that instrumented code pays nothing, else the SDK's,
// exporting by OTLP/HTTP in batches and flushed when the service stops. It
// also says whether tracing is on in the start-up line.
func tracingModule(t *tracingSettings) fx.Option {
	if t == nil {
		return fx.Module("tracing", fx.Provide(func() trace.TracerProvider { return noop.NewTracerProvider() }))
	}
	return fx.Module("tracing", fx.Provide(func(lc fx.Lifecycle) (trace.TracerProvider, error) {
		exporter, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(t.endpoint))
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
		}
		tp := sdktrace.NewTracerProvider(
			sdktrace.WithBatcher(exporter, batchOptions(t.delay)...),
			sdktrace.WithSampler(t.sampler),
			sdktrace.WithResource(t.resource),
		)
		// Stopped after every module that starts spans, since it was
		// provided before them: the last spans are exported.
		lc.Append(fx.StopHook(tp.Shutdown))
		return tp, nil
	}))
}

// optionalTracing is the tracer provider where the tracing module is wired,
// as serve wires it; without it, nothing is traced.
type optionalTracing struct {
	fx.In
	Provider trace.TracerProvider `optional:"true"`
}

// batchOptions are the exporting batches' options: the SDK's defaults but
// for the delay, when set.
func batchOptions(delay time.Duration) []sdktrace.BatchSpanProcessorOption {
	if delay == 0 {
		return nil
	}
	return []sdktrace.BatchSpanProcessorOption{sdktrace.WithBatchTimeout(delay)}
}
