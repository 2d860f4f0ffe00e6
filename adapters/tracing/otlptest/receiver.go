// Package otlptest is an OpenTelemetry collector for tests: a real HTTP
// server that serves OTLP/HTTP with protobuf bodies at /v1/traces, as the
// OpenTelemetry Collector does, and decodes what it receives with the OTLP
// protobuf definitions, so that a test checks the spans a service really
// exported.
package otlptest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a span as it arrived, its ids in hex.
type Span struct {
	Name                      string
	TraceID, SpanID, ParentID string // ParentID is empty for a root span
	Kind                      tracepb.Span_SpanKind
	Links                     []string // the Ref of each linked span
	Service                   string   // the service.name of its resource
	Attrs                     map[string]string
}

// Ref names the span as Links do: "trace/span".
func (s Span) Ref() string { return s.TraceID + "/" + s.SpanID }

// Receiver is a collector for one test. Build it with NewReceiver; its
// methods are safe for concurrent use.
type Receiver struct {
	// URL is the OTLP base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it.
	URL string

	mu    sync.Mutex
	spans []Span
}

// NewReceiver starts a collector, stopped when the test ends. An export
// to another path, in another encoding or that does not decode fails t
// and is refused with 400.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("OTLP export to %s as %q; want /v1/traces, application/x-protobuf", req.URL.Path, req.Header.Get("Content-Type"))
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(req.Body)
		var export coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &export)
		}
		if err != nil {
			t.Errorf("OTLP export does not decode: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&export)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) add(export *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range export.GetResourceSpans() {
		var service string
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				e := Span{
					Name: s.GetName(), Kind: s.GetKind(), Service: service,
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()), Attrs: map[string]string{},
				}
				for _, l := range s.GetLinks() {
					e.Links = append(e.Links, hex.EncodeToString(l.GetTraceId())+"/"+hex.EncodeToString(l.GetSpanId()))
				}
				for _, a := range s.GetAttributes() {
					// A string as it is; another value in the protobuf's text form.
					if v := a.GetValue(); v.GetStringValue() != "" {
						e.Attrs[a.GetKey()] = v.GetStringValue()
					} else {
						e.Attrs[a.GetKey()] = v.String()
					}
				}
				r.spans = append(r.spans, e)
			}
		}
	}
}

// Named returns the spans received so far with the given name.
func (r *Receiver) Named(name string) []Span {
	return r.where(func(s Span) bool { return s.Name == name })
}

// InTrace returns the spans received so far with the given name in the
// trace traceID.
func (r *Receiver) InTrace(traceID, name string) []Span {
	return r.where(func(s Span) bool { return s.Name == name && s.TraceID == traceID })
}

// LinkedTo returns the spans received so far with the given name that are
// linked to target, a span's Ref.
func (r *Receiver) LinkedTo(target, name string) []Span {
	return r.where(func(s Span) bool { return s.Name == name && slices.Contains(s.Links, target) })
}

func (r *Receiver) where(match func(Span) bool) []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Span
	for _, s := range r.spans {
		if match(s) {
			out = append(out, s)
		}
	}
	return out
}
