package tracing

import (
	"fmt"
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

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

// followLinks samples, besides what its sampler samples, every root span
// linked to a sampled span. A batch commit and a webhook attempt start
// traces of their own, linked to the creates they serve: sampled by ratio
// like any new trace, a sampled create's batch and attempts would be kept
// once in a hundred at 1 %, and its trace would end at the use case.
type followLinks struct{ sampler sdktrace.Sampler }

// ShouldSample keeps a root span linked to a sampled span, and leaves every
// other decision to the configured sampler.
func (f followLinks) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	if !trace.SpanContextFromContext(p.ParentContext).IsValid() {
		for _, l := range p.Links {
			if l.SpanContext.IsSampled() {
				return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
			}
		}
	}
	return f.sampler.ShouldSample(p)
}

// Description names the configured sampler, for the start-up line.
func (f followLinks) Description() string { return f.sampler.Description() + "+FollowLinks" }
