package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"

	"github.com/plantstore/plantstore/adapters/tracing"
)

// What the OpenTelemetry library reports, through its error handler or
// its own logger, arrives in the service's log as JSON lines.
func TestTheLibrarysErrorsAreJSONLogLines(t *testing.T) {
	var out bytes.Buffer
	tracing.LogTo(slog.New(slog.NewJSONHandler(&out, nil)))
	t.Cleanup(func() { tracing.LogTo(slog.New(slog.DiscardHandler)) }) // the library's state is the process's
	otel.Handle(errors.New("traces export: collector gone"))
	// The exporter reports a variable it cannot parse through the
	// library's logger, and goes on.
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "soon")
	_, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL("http://127.0.0.1:1/v1/traces"))
	require.NoError(t, err)

	var lines []map[string]any
	for line := range strings.Lines(out.String()) {
		var entry map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &entry), "not a JSON line: %q", line)
		lines = append(lines, entry)
	}
	require.Len(t, lines, 2, "%s", out.String())
	require.Equal(t, []any{"WARN", "tracing failed", "traces export: collector gone"}, []any{lines[0]["level"], lines[0]["msg"], lines[0]["error"]})
	require.Equal(t, "ERROR", lines[1]["level"])
	require.Contains(t, lines[1]["msg"], "parse duration")
}
