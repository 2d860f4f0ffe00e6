package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/tracing/otlptest"
	"github.com/plantstore/plantstore/adapters/webhook/webhooktest"
)

// A collector that accepts connections and never answers holds neither
// the stop nor its outcome, and neither does a receiver that never answers
// beside it: SIGTERM with an export and an attempt hanging, and spans
// waiting, still exits 0 within the grace period, the spans dropped with a
// warning, and everything the process printed, the library's complaints
// included, is JSON lines on stdout.
func TestAHungCollectorNeitherHoldsNorFailsTheStop(t *testing.T) {
	const grace = 2 * time.Second
	collector, h := otlptest.NewSilent(t), newHooks(t)
	receiver := h.receiver(t, webhooktest.Holding())
	p := startProcess(t, "sqlite:"+filepath.Join(t.TempDir(), "plants.db"), h.env(map[string]string{
		"PLANTSTORE_SHUTDOWN_TIMEOUT": grace.String(),
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
		"OTEL_BSP_SCHEDULE_DELAY":     "20", // an export at once; each waits 10 s for its answer
	}, receiver.URL))
	c := newCreator(t, p, 1)
	require.Equal(t, http.StatusOK, c.post(plantFor(1), "").status, "create")
	receiver.WaitHeld(t, func(n int) bool { return n == 1 }, 10*time.Second, "want the attempt held")
	collector.WaitExport(t, 10*time.Second)
	require.Equal(t, http.StatusOK, c.post(plantFor(2), "").status, "a create whose spans wait behind the hanging export")

	p.signal(t, syscall.SIGTERM)
	// The margin is for the process's own stop, not for the collector or the
	// receiver: the export or the attempt alone would outlast it.
	if state := p.waitExit(t, grace+4*time.Second); state.ExitCode() != 0 {
		t.Fatalf("exit %v", state)
	}
	require.Empty(t, p.stderr.String(), "stderr")
	out := p.stdout.String()
	for line := range strings.Lines(out) {
		require.True(t, json.Valid([]byte(line)), "not a JSON line: %q", line)
	}
	require.Contains(t, out, `"msg":"spans not exported by the end of the grace period dropped"`)
	require.Contains(t, out, `"msg":"stopped"`)
}

// An OTLP endpoint that is not an http:// or https:// URL stops start-up
// with one line naming its variable: the exporter would send the spans to
// localhost:4318 instead.
func TestAnOTLPEndpointWithoutSchemeStopsStartUp(t *testing.T) {
	p := launch(t, map[string]string{
		"PLANTSTORE_DATABASE_URL":     "sqlite:" + filepath.Join(t.TempDir(), "plants.db"),
		"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318",
	})
	require.NotZero(t, p.waitExit(t, time.Minute).ExitCode(), "serve started")
	require.Equal(t, "plantstore: OTEL_EXPORTER_OTLP_ENDPOINT=127.0.0.1:4318: must be an http:// or https:// URL\n", p.stderr.String())
	require.NotContains(t, p.stdout.String(), `"msg":"listening"`)
}
