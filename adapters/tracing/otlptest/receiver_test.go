package otlptest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/plantstore/plantstore/adapters/tracing"
	"github.com/plantstore/plantstore/adapters/tracing/otlptest"
)

// The service's own provider exports to the receiver by OTLP/HTTP, and
// the receiver gives back each span as sent: names, kinds, ids, parents,
// links, attributes and the service's name.
func TestTheReceiverDecodesWhatTheProviderExports(t *testing.T) {
	r := otlptest.NewReceiver(t)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.URL, "OTEL_SERVICE_NAME": "otlptest", "OTEL_TRACES_SAMPLER": "always_on"}
	s, err := tracing.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "test")
	require.NoError(t, err)
	tp, err := tracing.NewProvider(context.Background(), s)
	require.NoError(t, err)
	tracer := tp.Tracer("otlptest")
	ctx, parent := tracer.Start(context.Background(), "parent", trace.WithSpanKind(trace.SpanKindServer))
	_, child := tracer.Start(ctx, "child", trace.WithAttributes(attribute.String("plant", "Fern"), attribute.Int("id", 7)))
	child.End()
	parent.End()
	_, linked := tracer.Start(context.Background(), "linked", trace.WithLinks(trace.Link{SpanContext: child.SpanContext()}))
	linked.End()
	_, other := tracer.Start(context.Background(), "linked")
	other.End()
	require.NoError(t, tp.Shutdown(context.Background()), "the last spans exported")

	p, c := r.Named("parent"), r.Named("child")
	require.Len(t, p, 1)
	require.Len(t, c, 1)
	require.Empty(t, r.Named("never sent"))
	require.Equal(t, tracepb.Span_SPAN_KIND_SERVER, p[0].Kind)
	require.Equal(t, []string{"otlptest", "", parent.SpanContext().SpanID().String()}, []string{p[0].Service, p[0].ParentID, p[0].SpanID})
	require.Equal(t, []string{p[0].SpanID}, []string{r.InTrace(p[0].TraceID, "child")[0].ParentID}, "the child's parent")
	require.Empty(t, r.InTrace(p[0].TraceID, "linked"), "a linked root span has a trace of its own")
	require.Equal(t, "Fern", c[0].Attrs["plant"])
	require.Contains(t, c[0].Attrs["id"], "7")
	require.Len(t, r.Named("linked"), 2)
	l := r.LinkedTo(c[0].Ref(), "linked")
	require.Len(t, l, 1)
	require.Equal(t, linked.SpanContext().TraceID().String(), l[0].TraceID)
	require.Empty(t, r.LinkedTo(c[0].Ref(), "child"))
}

// spy notes a test's errors instead of failing it.
type spy struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (s *spy) Errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors = append(s.errors, fmt.Sprintf(format, args...))
}

// An export elsewhere, in JSON, or that does not decode fails the test and
// is refused.
func TestTheReceiverRefusesWhatIsNotOTLPProtobuf(t *testing.T) {
	for name, c := range map[string]struct{ path, contentType, body string }{
		"another path": {"/v1/metrics", "application/x-protobuf", ""},
		"json":         {"/v1/traces", "application/json", "{}"},
		"not protobuf": {"/v1/traces", "application/x-protobuf", "\xff\xff"},
	} {
		s := &spy{TB: t}
		r := otlptest.NewReceiver(s)
		resp, err := http.Post(r.URL+c.path, c.contentType, strings.NewReader(c.body))
		require.NoError(t, err, name)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, name)
		s.mu.Lock()
		require.Len(t, s.errors, 1, name)
		s.mu.Unlock()
	}
}
