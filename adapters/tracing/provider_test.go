package tracing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/tracing"
	"github.com/plantstore/plantstore/adapters/tracing/otlptest"
)

// An export to a collector that never answers ends at the export timeout,
// its retries included, with an error: it does not wait for the caller's
// deadline, nor for the exporter's minute of retries.
func TestAnExportToASilentCollectorEndsAtTheTimeout(t *testing.T) {
	collector := otlptest.NewSilent(t)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "300"}
	s, err := tracing.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "test")
	require.NoError(t, err)
	tp, err := tracing.NewProvider(context.Background(), s)
	require.NoError(t, err)
	_, span := tp.Tracer("test").Start(context.Background(), "unanswered")
	span.End()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.Error(t, tp.ForceFlush(ctx), "an export nobody answered")
	require.NoError(t, ctx.Err(), "the export waited for the caller's deadline")
	collector.WaitExport(t, time.Second) // it was sent, not refused

	// A shutdown that cannot export the last spans returns by its deadline.
	_, span = tp.Tracer("test").Start(context.Background(), "dropped")
	span.End()
	stop, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, tp.Shutdown(stop), context.DeadlineExceeded)
}
