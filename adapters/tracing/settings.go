// Package tracing is the service's OpenTelemetry set-up: it reads the
// standard OTEL_* variables, so that an operator's usual collector setup
// applies unchanged, and builds the SDK's tracer provider that exports by
// OTLP/HTTP. It samples every root span linked to a sampled span, so that
// a sampled create keeps its batch commit and delivery attempts.
package tracing

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Help is the section of `serve --help` on tracing: it is configured by
// the standard OpenTelemetry variables, not by PLANTSTORE_* settings.
const Help = `Tracing (OpenTelemetry, off unless an OTLP endpoint is set):
  OTEL_EXPORTER_OTLP_ENDPOINT         OTLP/HTTP base URL, http:// or https://; traces go to its /v1/traces (default none: tracing off)
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  full OTLP/HTTP URL of traces, http:// or https://; wins over the above
  OTEL_EXPORTER_OTLP_TIMEOUT          milliseconds one export may take, its retries included (default 10000)
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT   the same for traces; wins over the above
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

// Settings are the tracing settings read from the OTEL_* variables; nil
// settings mean tracing is off.
type Settings struct {
	endpoint  string // full URL of the traces endpoint
	sampler   sdktrace.Sampler
	delay     time.Duration // between exports; 0: the SDK's default
	timeout   time.Duration // of one export, its retries included
	resource  *resource.Resource
	described string // for the start-up line
}

// FromEnv reads the OTEL_* variables through getenv; version is the
// service.version of the spans. Tracing is off (nil settings) without an
// endpoint, with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true; a
// value it cannot honour is an error naming its variable, which stops
// start-up as a bad PLANTSTORE_* setting does.
func FromEnv(getenv func(string) (string, bool), version string) (*Settings, error) {
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
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := env(k); p != "" && p != "http/protobuf" {
			return nil, fmt.Errorf("%s=%s: only http/protobuf is served", k, p)
		}
	}
	endpoint, err := loadEndpoint(env)
	if endpoint == "" || err != nil {
		return nil, err
	}
	timeout, err := loadTimeout(env)
	if err != nil {
		return nil, err
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
	res := resource.NewSchemaless(append(attrs, semconv.ServiceName(name), semconv.ServiceVersion(version))...)
	var delay time.Duration
	if v := env("OTEL_BSP_SCHEDULE_DELAY"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("OTEL_BSP_SCHEDULE_DELAY=%s: must be a positive number of milliseconds", v)
		}
		delay = time.Duration(ms) * time.Millisecond
	}
	return &Settings{endpoint: endpoint, sampler: sampler, resource: res, delay: delay, timeout: timeout,
		described: sampler.Description()}, nil
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
func (s *Settings) String() string {
	if s == nil {
		return "off"
	}
	return s.endpoint + " " + s.described
}
