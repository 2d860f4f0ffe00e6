package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"
)

// The worker's rules (retries, back-off, maximum age, slots, giving way,
// stops) are tested in adapters/dispatch on a fake clock; these tests check
// the wired service end to end: signed deliveries, metrics, the webhooks
// command and the development receiver, on each store where it matters.

// hookReceiver is a webhook receiver for the tests: it verifies every
// delivery with the Standard Webhooks reference library, answers by a
// script, and records what it got.
type hookReceiver struct {
	t        *testing.T
	srv      *httptest.Server
	verifier *standardwebhooks.Webhook
	answer   func(attempt int) int // status of the nth attempt, from 1; nil: 204
	mu       sync.Mutex
	attempts int
	got      []delivered // verified deliveries answered 2xx
}

type delivered struct{ id, body string }

// newSecretFile writes a fresh whsec_ secret for the service and returns its
// path and the secret.
func newSecretFile(t *testing.T) (string, string) {
	t.Helper()
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret := "whsec_" + base64.StdEncoding.EncodeToString(b[:])
	path := filepath.Join(t.TempDir(), "webhook-secret")
	write(t, path, []byte(secret+"\n"))
	return path, secret
}

func newHookReceiver(t *testing.T, secret string, answer func(int) int) *hookReceiver {
	t.Helper()
	v, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	r := &hookReceiver{t: t, verifier: v, answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if err := r.verifier.Verify(body, req.Header); err != nil || req.Method != http.MethodPost ||
		req.Header.Get("Content-Type") != "application/json" {
		r.t.Errorf("a delivery that does not verify: %s %q %v", req.Method, body, err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.attempts++
	status := http.StatusNoContent
	if r.answer != nil {
		status = r.answer(r.attempts)
	}
	if status < 300 {
		r.got = append(r.got, delivered{id: req.Header.Get("webhook-id"), body: string(body)})
	}
	r.mu.Unlock()
	if status >= 300 && status < 400 {
		w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
	}
	w.WriteHeader(status)
}

func (r *hookReceiver) received() []delivered {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivered(nil), r.got...)
}

func (r *hookReceiver) attemptCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts
}

// deliveries waits until n deliveries arrived and returns them.
func (r *hookReceiver) deliveries(t *testing.T, n int, within time.Duration) []delivered {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.received()) >= n }, within, 20*time.Millisecond, "want %d deliveries", n)
	return r.received()
}

// webhookEnv configures the service to announce to urls.
func webhookEnv(secretFile string, urls ...string) map[string]string {
	return map[string]string{"PLANTSTORE_WEBHOOK_URLS": strings.Join(urls, ","), "PLANTSTORE_WEBHOOK_SECRET_FILE": secretFile}
}

func TestWebhookAnnouncesEveryStoredPlantToEveryReceiver(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		file, secret := newSecretFile(t)
		a, b := newHookReceiver(t, secret, nil), newHookReceiver(t, secret, nil)
		s := startService(t, db, webhookEnv(file, a.srv.URL+"/hooks/a", b.srv.URL))
		s.create(t, `{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`).expect(t, 200, "")
		s.create(t, `{"id":-3,"name":"Caf\u00e9 \"quoted\" \\ 🌵"}`).expect(t, 200, "")
		s.create(t, `{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`).expect(t, 200, "") // a replay
		s.create(t, `{"id":7,"name":"Other"}`).expectError(t, 409, "40901")                  // a conflict
		s.call(t, "DELETE", "/plants/-3").expect(t, 204, "")                                 // does not withdraw
		// Events are committed with their plants: once four are delivered
		// and none is pending, none more comes.
		require.Eventually(t, func() bool {
			m := s.scrape()
			for _, line := range []string{`plantstore_webhook_attempts_total{outcome="delivered"} 4`, "plantstore_webhook_events_pending 0",
				"plantstore_webhook_delivery_latency_seconds_count 4"} {
				if !strings.Contains(m, line+"\n") {
					return false
				}
			}
			return true
		}, 10*time.Second, 20*time.Millisecond, "metrics of four deliveries and none pending")
		want := map[string]bool{`{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`: true, `{"id":-3,"name":"Café \"quoted\" \\ 🌵"}`: true}
		ids := map[string]bool{}
		for _, r := range []*hookReceiver{a, b} {
			got := r.received()
			if len(got) != 2 {
				t.Errorf("a receiver got %d events; want 2", len(got))
			}
			for _, d := range got {
				s.contract.CheckWebhook(t, []byte(d.body))
				if !want[d.body] || ids[d.id] {
					t.Errorf("delivery %s %s", d.id, d.body)
				}
				ids[d.id] = true
			}
		}
	})
}

// A receiver that hangs holds its own attempts only: creates, readiness
// and the other receivers' deliveries go on, well within one attempt's
// timeout.
func TestAHangingReceiverNeverAffectsClientsOrOtherReceivers(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		file, secret := newSecretFile(t)
		release := make(chan struct{})
		hanging := newHookReceiver(t, secret, func(int) int { <-release; return 204 })
		defer close(release)
		healthy := newHookReceiver(t, secret, nil)
		env := webhookEnv(file, hanging.srv.URL, healthy.srv.URL)
		env["PLANTSTORE_WEBHOOK_CONCURRENCY"] = "2"
		s := startService(t, db, env)
		start := time.Now()
		for i := range 50 {
			s.create(t, `{"id":`+strconv.Itoa(i)+`,"name":"Fern"}`).expect(t, 200, "")
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("50 creates took %s with a hanging receiver", took)
		}
		if r := s.adminGet(t, "/readyz"); r.status != 200 {
			t.Errorf("readiness %d with a hanging receiver", r.status)
		}
		healthy.deliveries(t, 50, 5*time.Second) // the attempt timeout is 10s
	})
}

// downUntilUp answers every attempt with down until bringUp is called, then
// with up.
func downUntilUp(down, up int) (answer func(int) int, bringUp func()) {
	var isUp atomic.Bool
	return func(int) int {
		if isUp.Load() {
			return up
		}
		return down
	}, func() { isUp.Store(true) }
}

// metricValue reads the value of an unlabelled metric from the Prometheus
// text format.
func metricValue(t *testing.T, metrics, name string) float64 {
	t.Helper()
	for line := range strings.SplitSeq(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// scrape is the service's metrics, or "" when they cannot be read: for
// conditions that are checked again.
func (s *service) scrape() string {
	resp, err := s.client.Get(s.admin + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// One of the two webhook settings without the other stops start-up with one
// line naming both, in development mode too: it makes up no signing secret.
func TestHalfAWebhookConfigurationStopsStartUp(t *testing.T) {
	secret, _ := newSecretFile(t)
	for name, env := range map[string]map[string]string{
		"urls alone":       {"PLANTSTORE_WEBHOOK_URLS": "http://127.0.0.1:1/hook"},
		"urls alone dev":   {"PLANTSTORE_WEBHOOK_URLS": "http://127.0.0.1:1/hook", "PLANTSTORE_DEV": "true"},
		"secret alone":     {"PLANTSTORE_WEBHOOK_SECRET_FILE": secret},
		"secret alone dev": {"PLANTSTORE_WEBHOOK_SECRET_FILE": secret, "PLANTSTORE_DEV": "true"},
	} {
		t.Run(name, func(t *testing.T) {
			p := launch(t, env)
			if state := p.waitExit(t, time.Minute); state.ExitCode() == 0 {
				t.Fatal("serve started with half a webhook configuration")
			}
			msg := p.stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") {
				t.Errorf("stderr is not one line: %q", msg)
			}
			for _, want := range []string{"PLANTSTORE_WEBHOOK_URLS", "PLANTSTORE_WEBHOOK_SECRET_FILE"} {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr %q does not name %s", msg, want)
				}
			}
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
}

// webhooks listen verifies and prints the events the service sends it, one
// JSON line each, and stops when its context ends.
func TestWebhooksListenPrintsVerifiedEvents(t *testing.T) {
	file, _ := newSecretFile(t)
	ctx, cancel := context.WithCancel(t.Context())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan struct{})
	var listenErr error
	go func() {
		defer close(done)
		listenErr = webhooks(ctx, []string{"listen", "--addr", "127.0.0.1:0", "--secret-file", file}, noEnv, stdout, stderr)
	}()
	t.Cleanup(func() { cancel(); <-done })
	var url string
	require.Eventually(t, func() bool {
		_, rest, ok := strings.Cut(stderr.String(), "Receiving new-plant events at ")
		url, _, _ = strings.Cut(rest, " ")
		return ok
	}, 5*time.Second, 10*time.Millisecond, "webhooks listen did not start")
	s := startService(t, storeURLs()["sqlite"](t), webhookEnv(file, url))
	s.create(t, `{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`).expect(t, 200, "")
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "\n") }, 10*time.Second, 20*time.Millisecond, "no event printed")
	var got map[string]any
	line, _, _ := strings.Cut(stdout.String(), "\n") // at least once: a repeat may follow
	require.NoError(t, json.Unmarshal([]byte(line), &got), line)
	if got["id"] != 7.0 || got["name"] != "Monstera deliciosa" || got["tag"] != "aroid" || !strings.HasPrefix(fmt.Sprint(got["webhook_id"]), "msg_") {
		t.Errorf("printed %v", got)
	}
	cancel()
	select {
	case <-done:
		require.NoError(t, listenErr, "webhooks listen")
	case <-time.After(10 * time.Second):
		t.Fatal("webhooks listen did not stop with its context")
	}
}

func noEnv(string) (string, bool) { return "", false }
