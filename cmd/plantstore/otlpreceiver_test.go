package main

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a collector for one test: it serves OTLP/HTTP with
// protobuf bodies at /v1/traces, as the OpenTelemetry Collector does, and
// decodes what it receives with the OTLP protobuf definitions, so that a
// test checks the spans the service really exported.
type otlpReceiver struct {
	URL string

	mu    sync.Mutex
	spans []exportedSpan
}

// exportedSpan is a span as it arrived, its ids in hex.
type exportedSpan struct {
	name, traceID, spanID, parentID string
	kind                            tracepb.Span_SpanKind
	links                           []string // "trace/span" of each link
	service                         string
	attrs                           map[string]string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
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

func (r *otlpReceiver) add(export *coltracepb.ExportTraceServiceRequest) {
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
				e := exportedSpan{
					name: s.GetName(), kind: s.GetKind(), service: service,
					traceID: hex.EncodeToString(s.GetTraceId()), spanID: hex.EncodeToString(s.GetSpanId()),
					parentID: hex.EncodeToString(s.GetParentSpanId()), attrs: map[string]string{},
				}
				for _, l := range s.GetLinks() {
					e.links = append(e.links, hex.EncodeToString(l.GetTraceId())+"/"+hex.EncodeToString(l.GetSpanId()))
				}
				for _, a := range s.GetAttributes() {
					v := a.GetValue()
					switch {
					case v.GetStringValue() != "":
						e.attrs[a.GetKey()] = v.GetStringValue()
					default:
						e.attrs[a.GetKey()] = v.String()
					}
				}
				r.spans = append(r.spans, e)
			}
		}
	}
}

// named returns the spans received so far with the given name.
func (r *otlpReceiver) named(name string) []exportedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []exportedSpan
	for _, s := range r.spans {
		if s.name == name {
			out = append(out, s)
		}
	}
	return out
}
