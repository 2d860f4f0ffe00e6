package main

import (
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

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
