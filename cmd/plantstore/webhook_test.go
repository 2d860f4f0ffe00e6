package main

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/plantstore/plantstore/adapters/tracing"
	"github.com/plantstore/plantstore/adapters/tracing/otlptest"
	"github.com/plantstore/plantstore/adapters/webhook/webhooktest"
	"github.com/plantstore/plantstore/application"
)

// The worker's rules (retries, back-off, maximum age, slots, giving way,
// stops) are tested in adapters/dispatch on a fake clock, the receiver of
// these tests in adapters/webhook/webhooktest; these tests check the wired
// service end to end: signed deliveries, metrics, the webhooks command and
// the development receiver, on each store where it matters.

// hooks is a fresh signing secret, in a file for the service, and the
// receivers of a test, which verify with it.
type hooks struct{ file, secret string }

func newHooks(t *testing.T) hooks {
	file, secret := webhooktest.NewSecretFile(t)
	return hooks{file, secret}
}

func (h hooks) receiver(t *testing.T, opts ...webhooktest.Option) *webhooktest.Receiver {
	return webhooktest.NewReceiver(t, h.secret, opts...)
}

// env configures the service to announce to urls, with the settings of
// extra besides.
func (h hooks) env(extra map[string]string, urls ...string) map[string]string {
	env := map[string]string{"PLANTSTORE_WEBHOOK_URLS": strings.Join(urls, ","), "PLANTSTORE_WEBHOOK_SECRET_FILE": h.file}
	maps.Copy(env, extra)
	return env
}

// Every stored plant is announced to every receiver, on each store, and a
// create's trace, as a collector receives it by OTLP, leads to its batch
// and deliveries: the request's server span continues the caller's
// traceparent; the use case's span is its child; the batch commit that
// carried the create has a span of its own linked to the use case's (it
// served other requests too); and each webhook attempt, later, has a span
// of its own trace linked to the create's. The access line names the
// trace. Sampling every trace, or none but those the caller sampled (as a
// ratio keeps the rare one it samples), the trace is the same.
func TestEveryStoredPlantIsAnnouncedToEveryReceiverWithItsTrace(t *testing.T) {
	for name, sampler := range map[string][2]string{
		"always_on":                  {"always_on", ""},
		"sampled by the caller only": {"parentbased_traceidratio", "0"},
	} {
		t.Run(name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, db string) { announceAndTrace(t, db, sampler) })
		})
	}
}

func announceAndTrace(t *testing.T, db string, sampler [2]string) {
	collector, h := otlptest.NewReceiver(t), newHooks(t)
	a, b := h.receiver(t), h.receiver(t)
	env := h.env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_TRACES_SAMPLER": sampler[0], "OTEL_TRACES_SAMPLER_ARG": sampler[1],
		"OTEL_SERVICE_NAME": "plantstore-test", "OTEL_BSP_SCHEDULE_DELAY": "20",
	}, a.URL+"/hooks/a", b.URL)
	traces, err := tracing.FromEnv(envOf(env), "test")
	require.NoError(t, err)
	s := startService(t, db, env, tracingModule(traces))
	const caller, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	s.do(t, "POST", "/plants", map[string]string{
		"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/json", "traceparent": "00-" + caller + "-" + callerSpan + "-01",
	}, []byte(`{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`)).expect(t, 200, "")
	s.create(t, `{"id":-3,"name":"Caf\u00e9 \"quoted\" \\ 🌵"}`).expect(t, 200, "")
	s.create(t, `{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`).expect(t, 200, "") // a replay
	s.create(t, `{"id":7,"name":"Other"}`).expectError(t, 409, "40901")                  // a conflict
	s.call(t, "DELETE", "/plants/-3").expect(t, 204, "")                                 // does not withdraw
	// Events are committed with their plants: once four are delivered
	// and none is pending, none more comes.
	require.Eventually(t, func() bool {
		m := scrape(s.admin)
		return strings.Contains(m, "plantstore_webhook_attempts_total{outcome=\"delivered\"} 4\n") &&
			strings.Contains(m, "plantstore_webhook_events_pending 0\n") &&
			strings.Contains(m, "plantstore_webhook_delivery_latency_seconds_count 4\n")
	}, time.Minute, 20*time.Millisecond, "metrics of four deliveries and none pending")
	want := map[string]bool{`{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`: true, `{"id":-3,"name":"Café \"quoted\" \\ 🌵"}`: true}
	ids := map[string]bool{}
	for _, r := range []*webhooktest.Receiver{a, b} {
		got := r.Deliveries()
		require.Len(t, got, 2, "events of one receiver")
		for _, d := range got {
			s.contract.CheckWebhook(t, []byte(d.Body))
			require.True(t, want[d.Body] && !ids[d.ID], "delivery %s %s", d.ID, d.Body)
			ids[d.ID] = true
		}
	}

	// The spans end after the answers, maybe after the deliveries: every
	// one is waited for.
	linked := func(name string) []otlptest.Span {
		if useCases := collector.InTrace(caller, "CreatePlant"); len(useCases) > 0 {
			return collector.LinkedTo(useCases[0].Ref(), name)
		}
		return nil
	}
	require.Eventually(t, func() bool {
		return len(collector.InTrace(caller, "POST /plants")) > 0 && len(linked("batch commit")) > 0 && len(linked("webhook attempt")) == 2
	}, time.Minute, 10*time.Millisecond, "the spans of the request, use case, batch and attempts exported")
	requests, useCases, batches := collector.InTrace(caller, "POST /plants"), collector.InTrace(caller, "CreatePlant"), linked("batch commit")
	require.Equal(t, []int{1, 1, 1}, []int{len(requests), len(useCases), len(batches)}, "spans of the request, the use case, the batch")
	require.Equal(t, []string{callerSpan, "plantstore-test"}, []string{requests[0].ParentID, requests[0].Service}, "the request continues the caller's trace")
	require.Equal(t, tracepb.Span_SPAN_KIND_SERVER, requests[0].Kind)
	require.Equal(t, requests[0].SpanID, useCases[0].ParentID, "the use case is the request's child")
	require.Empty(t, batches[0].ParentID, "a batch has no parent: it serves many requests")
	require.NotEqual(t, caller, batches[0].TraceID)
	var urls []string
	for _, attempt := range linked("webhook attempt") {
		require.Empty(t, attempt.ParentID, "an attempt is a trace of its own")
		require.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, attempt.Kind)
		urls = append(urls, attempt.Attrs["url.full"])
	}
	require.ElementsMatch(t, []string{a.URL + "/hooks/a", b.URL}, urls, "an attempt to each receiver")
	require.Contains(t, s.logs.String(), `"trace_id":"`+caller+`"`, "the access line names the trace")
}

// A receiver that hangs holds its own attempts only: creates, readiness
// and the other receivers' deliveries go on, well within one attempt's
// timeout.
func TestAHangingReceiverNeverAffectsClientsOrOtherReceivers(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		h := newHooks(t)
		hanging, healthy := h.receiver(t, webhooktest.Holding()), h.receiver(t)
		defer hanging.Release() // before the service stops
		s := startService(t, db, h.env(map[string]string{"PLANTSTORE_WEBHOOK_CONCURRENCY": "2"}, hanging.URL, healthy.URL))
		start := time.Now()
		for i := range 50 {
			s.create(t, `{"id":`+strconv.Itoa(i)+`,"name":"Fern"}`).expect(t, 200, "")
		}
		require.Less(t, time.Since(start), 5*time.Second, "50 creates with a hanging receiver")
		require.Equal(t, 200, s.adminGet(t, "/readyz").status, "readiness with a hanging receiver")
		healthy.WaitDeliveries(t, 50, 5*time.Second) // the attempt timeout is 10s
	})
}

// scrape is the metrics at admin, the base URL of an admin listener, or ""
// when they cannot be read: for conditions that are checked again.
func scrape(admin string) string {
	_, metrics := adminGet(admin, "/metrics")
	return metrics
}

// One of the two webhook settings without the other stops start-up with one
// line naming both, in development mode too: it makes up no signing secret.
func TestHalfAWebhookConfigurationStopsStartUp(t *testing.T) {
	secret, _ := webhooktest.NewSecretFile(t)
	for name, env := range map[string]map[string]string{
		"urls alone":       {"PLANTSTORE_WEBHOOK_URLS": "http://127.0.0.1:1/hook"},
		"urls alone dev":   {"PLANTSTORE_WEBHOOK_URLS": "http://127.0.0.1:1/hook", "PLANTSTORE_DEV": "true"},
		"secret alone":     {"PLANTSTORE_WEBHOOK_SECRET_FILE": secret},
		"secret alone dev": {"PLANTSTORE_WEBHOOK_SECRET_FILE": secret, "PLANTSTORE_DEV": "true"},
	} {
		t.Run(name, func(t *testing.T) {
			p := launch(t, env)
			require.NotZero(t, p.waitExit(t, time.Minute).ExitCode(), "serve started with half a webhook configuration")
			msg := p.stderr.String()
			require.True(t, strings.Count(msg, "\n") == 1 && strings.HasSuffix(msg, "\n"), "stderr is not one line: %q", msg)
			require.Contains(t, msg, "PLANTSTORE_WEBHOOK_URLS")
			require.Contains(t, msg, "PLANTSTORE_WEBHOOK_SECRET_FILE")
		})
	}
}

// Deliveries give way at eight API requests in flight per core unless told
// otherwise: a replica with more cores serves as many connections with
// cores to spare for them. A receiver's URL is its identity (its events,
// claims and attempt slots): one listed twice is refused with the
// setting's name and the URL.
func TestWebhookSettings(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3)) // a machine unlike any test machine
	load := func(k, v string) (*config, error) {
		return loadConfig("serve", nil, func(key string) (string, bool) { return v, key == k }, io.Discard)
	}
	for value, want := range map[string]int{"": 24, "auto": 24, "0": 0, "40": 40} {
		c, err := load("PLANTSTORE_WEBHOOK_YIELD_AT", value)
		require.NoError(t, err, value)
		require.Equal(t, want, int(c.Webhook.YieldAt), "PLANTSTORE_WEBHOOK_YIELD_AT=%q", value)
	}
	for _, bad := range []string{"-1", "many", "1.5"} {
		_, err := load("PLANTSTORE_WEBHOOK_YIELD_AT", bad)
		require.ErrorContains(t, err, "PLANTSTORE_WEBHOOK_YIELD_AT", bad)
	}
	_, err := load("PLANTSTORE_WEBHOOK_URLS", "http://a.example/hook, http://b.example/hook,http://a.example/hook")
	require.ErrorContains(t, err, "PLANTSTORE_WEBHOOK_URLS")
	require.ErrorContains(t, err, "http://a.example/hook twice")
	// The payload is plant (v2) unless told event; nothing else.
	for value, want := range map[string]application.Payload{"": application.PlantPayload, "plant": application.PlantPayload, "event": application.EventPayload} {
		c, err := load("PLANTSTORE_WEBHOOK_PAYLOAD", value)
		require.NoError(t, err, value)
		require.Equal(t, want, application.Payload(c.Webhook.Payload), "PLANTSTORE_WEBHOOK_PAYLOAD=%q", value)
	}
	for _, bad := range []string{"Event", "events", "envelope", "plant,event"} {
		_, err := load("PLANTSTORE_WEBHOOK_PAYLOAD", bad)
		require.ErrorContains(t, err, "PLANTSTORE_WEBHOOK_PAYLOAD", bad)
		require.ErrorContains(t, err, "must be plant or event", bad)
	}
}

// webhooks listen verifies and prints the events the service sends it, one
// JSON line each, and stops when its context ends.
func TestWebhooksListenPrintsVerifiedEvents(t *testing.T) {
	h := newHooks(t)
	ctx, cancel := context.WithCancel(t.Context())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- webhooks(ctx, []string{"listen", "--addr", "127.0.0.1:0", "--secret-file", h.file}, noEnv, stdout, stderr)
	}()
	defer cancel()
	var url string
	require.Eventually(t, func() bool {
		_, rest, ok := strings.Cut(stderr.String(), "Receiving webhook deliveries at ")
		url, _, _ = strings.Cut(rest, " ")
		return ok
	}, time.Minute, 10*time.Millisecond, "webhooks listen did not start")
	s := startService(t, storeURLs()["sqlite"](t), h.env(nil, url))
	s.create(t, `{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`).expect(t, 200, "")
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "\n") }, time.Minute, 20*time.Millisecond, "no event printed")
	var got map[string]any
	line, _, _ := strings.Cut(stdout.String(), "\n") // at least once: a repeat may follow
	require.NoError(t, json.Unmarshal([]byte(line), &got), line)
	id, _ := got["webhook_id"].(string)
	require.True(t, got["id"] == 7.0 && got["name"] == "Monstera deliciosa" && got["tag"] == "aroid" && strings.HasPrefix(id, "msg_"), "printed %s", line)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "webhooks listen")
	case <-time.After(10 * time.Second):
		t.Fatal("webhooks listen did not stop with its context")
	}
}

func noEnv(string) (string, bool) { return "", false }
