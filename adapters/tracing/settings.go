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
  OTEL_EXPORTER_OTLP_ENDPOINT         OTLP/HTTP base URL, http:// or https://, no query; traces go to its /v1/traces (default none: tracing off)
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  full OTLP/HTTP URL of traces, http:// or https://, no query; wins over the above
  OTEL_EXPORTER_OTLP_TIMEOUT          milliseconds one export may take, its retries included (default 10000)
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT   the same for traces; wins over the above
  OTEL_EXPORTER_OTLP_PROTOCOL         http/protobuf (the only one served; default http/protobuf)
  OTEL_EXPORTER_OTLP_HEADERS          headers sent with every export, name=value,... with values percent-encoded
  OTEL_EXPORTER_OTLP_TRACES_HEADERS   the same for traces; replaces the above
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
	described string // for the start-up line: the endpoint, masked, and the sampler
}

// FromEnv reads the OTEL_* variables through getenv; version is the
// service.version of the spans. Tracing is off (nil settings) without an
// endpoint, with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true; a
// value it cannot honour is an error naming its variable, which stops
// start-up as a bad PLANTSTORE_* setting does.
func FromEnv(getenv func(string) (string, bool), version string) (*Settings, error) {
	s, _, err := Resolve(getenv, version)
	return s, err
}

// Value is one OTEL_* variable as the service takes it, for `plantstore
// settings`: the value in effect, credentials masked, and a note that
// starts with where it came from (default or environment).
type Value struct {
	Name, Value, Note string
}

// Where a value came from, as a Value's note starts.
const (
	byDefault       = "default"
	fromEnvironment = "environment"
)

// Resolve is FromEnv, with every variable's value in effect: when tracing
// is off, the one that turns it off; else each variable the service or its
// exporter reads, defaults included.
func Resolve(getenv func(string) (string, bool), version string) (*Settings, []Value, error) {
	env := func(k string) string { v, _ := getenv(k); return strings.TrimSpace(v) }
	origin := func(k string) string {
		if env(k) != "" {
			return fromEnvironment
		}
		return byDefault
	}
	if v := env("OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		return nil, []Value{{"OTEL_SDK_DISABLED", v, fromEnvironment + ": tracing off"}}, nil
	}
	switch exp := env("OTEL_TRACES_EXPORTER"); exp {
	case "", "otlp":
	case "none":
		return nil, []Value{{"OTEL_TRACES_EXPORTER", exp, fromEnvironment + ": tracing off"}}, nil
	default:
		return nil, nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: only otlp and none are served", exp)
	}
	protocol := Value{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", byDefault}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := env(k); p != "" && p != "http/protobuf" {
			return nil, nil, fmt.Errorf("%s=%s: only http/protobuf is served", k, p)
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if env(k) != "" {
			protocol = Value{k, "http/protobuf", fromEnvironment}
		}
	}
	endpoint, endpointVar, err := loadEndpoint(env)
	if err != nil {
		return nil, nil, err
	}
	if endpoint == "" {
		return nil, []Value{{endpointVar, "", byDefault + " none: tracing off"}}, nil
	}
	timeout, timeoutShown, err := loadTimeout(env)
	if err != nil {
		return nil, nil, err
	}
	headers, err := loadHeaders(env)
	if err != nil {
		return nil, nil, err
	}
	samplerName, arg := env("OTEL_TRACES_SAMPLER"), env("OTEL_TRACES_SAMPLER_ARG")
	configured, err := loadSampler(samplerName, arg)
	if err != nil {
		return nil, nil, err
	}
	sampler := followLinks{configured}
	name := env("OTEL_SERVICE_NAME")
	if name == "" {
		name = "plantstore"
	}
	attrs, err := resourceAttributes(env("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return nil, nil, err
	}
	res := resource.NewSchemaless(append(attrs, semconv.ServiceName(name), semconv.ServiceVersion(version))...)
	var delay time.Duration
	delayShown := Value{"OTEL_BSP_SCHEDULE_DELAY", "5000", byDefault + "; milliseconds between exports of finished spans"}
	if v := env("OTEL_BSP_SCHEDULE_DELAY"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, nil, fmt.Errorf("OTEL_BSP_SCHEDULE_DELAY=%s: must be a positive number of milliseconds", v)
		}
		delay = time.Duration(ms) * time.Millisecond
		delayShown.Value, delayShown.Note = v, fromEnvironment+"; milliseconds between exports of finished spans"
	}
	shownEndpoint := maskedEndpoint(endpoint)
	values := []Value{
		{endpointVar, maskedEndpoint(env(endpointVar)), fromEnvironment + "; spans go to " + shownEndpoint},
		protocol,
		timeoutShown,
		headers,
		{"OTEL_TRACES_EXPORTER", "otlp", origin("OTEL_TRACES_EXPORTER")},
		samplerShown(samplerName, arg),
		{"OTEL_SERVICE_NAME", name, origin("OTEL_SERVICE_NAME")},
		{"OTEL_RESOURCE_ATTRIBUTES", env("OTEL_RESOURCE_ATTRIBUTES"), origin("OTEL_RESOURCE_ATTRIBUTES")},
		delayShown,
	}
	for _, k := range exporterVariables {
		if v := env(k); v != "" {
			values = append(values, Value{k, v, fromEnvironment + "; read by the OTLP exporter"})
		}
	}
	return &Settings{endpoint: endpoint, sampler: sampler, resource: res, delay: delay, timeout: timeout,
		described: shownEndpoint + " " + sampler.Description()}, values, nil
}

// samplerShown is the sampler and its argument as the service takes them.
func samplerShown(name, arg string) Value {
	v := Value{"OTEL_TRACES_SAMPLER", name, fromEnvironment}
	if name == "" {
		v.Value, v.Note = "parentbased_always_on", byDefault
	}
	switch {
	case !strings.HasSuffix(v.Value, "traceidratio"):
		if arg != "" {
			v.Note += "; OTEL_TRACES_SAMPLER_ARG is not used by this sampler"
		}
	case arg == "":
		v.Note += "; ratio 1 (OTEL_TRACES_SAMPLER_ARG unset)"
	default:
		v.Note += "; ratio " + arg + " (OTEL_TRACES_SAMPLER_ARG)"
	}
	return v
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
	return s.described
}
