package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
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
)

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

type delivered struct {
	id, body string
	at       time.Time
}

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
	if err != nil {
		t.Fatal(err)
	}
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
		r.got = append(r.got, delivered{id: req.Header.Get("webhook-id"), body: string(body), at: time.Now()})
	}
	r.mu.Unlock()
	if status >= 300 && status < 400 {
		w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
	}
	w.WriteHeader(status)
}

// deliveries waits until n deliveries arrived and returns them.
func (r *hookReceiver) deliveries(t *testing.T, n int, within time.Duration) []delivered {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r.mu.Lock()
		got := append([]delivered(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries after %s; want %d", len(got), within, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
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
		want := map[string]bool{`{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`: true, `{"id":-3,"name":"Café \"quoted\" \\ 🌵"}`: true}
		ids := map[string]bool{}
		for _, r := range []*hookReceiver{a, b} {
			got := r.deliveries(t, 2, 10*time.Second)
			time.Sleep(200 * time.Millisecond) // nothing more comes
			r.mu.Lock()
			if len(r.got) != 2 {
				t.Errorf("a receiver got %d events; want 2", len(r.got))
			}
			r.mu.Unlock()
			for _, d := range got {
				s.contract.CheckWebhook(t, []byte(d.body))
				if !want[d.body] || ids[d.id] {
					t.Errorf("delivery %s %s", d.id, d.body)
				}
				ids[d.id] = true
			}
		}
		m := s.adminGet(t, "/metrics").body
		for _, line := range []string{`plantstore_webhook_attempts_total{outcome="delivered"} 4`, "plantstore_webhook_events_pending 0", "plantstore_webhook_delivery_latency_seconds_count 4"} {
			if !strings.Contains(m, line) {
				t.Errorf("metrics lack %s", line)
			}
		}
	})
}

// A receiver that fails, redirects or is down for a while gets the event
// once it answers 2xx; the redirect is not followed.
func TestWebhookRetriesUntilTheReceiverAnswers(t *testing.T) {
	forEachStore(t, testWebhookRetriesUntilTheReceiverAnswers)
}

func testWebhookRetriesUntilTheReceiverAnswers(t *testing.T, db string) {
	file, secret := newSecretFile(t)
	failing := newHookReceiver(t, secret, func(n int) int { return []int{500, 503, 200}[min(n, 3)-1] })
	redirecting := newHookReceiver(t, secret, func(n int) int { return []int{307, 302, 202}[min(n, 3)-1] })
	// A port that refuses connections until a receiver listens on it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/"
	_ = ln.Close()
	s := startService(t, db, webhookEnv(file, failing.srv.URL, redirecting.srv.URL, down))
	s.create(t, `{"id":1,"name":"Fern"}`).expect(t, 200, "")

	time.Sleep(1500 * time.Millisecond)
	// While a receiver is down, its event is pending and ageing.
	m := s.adminGet(t, "/metrics").body
	if pending := metricValue(t, m, "plantstore_webhook_events_pending"); pending < 1 {
		t.Errorf("%v events pending while a receiver is down; want at least 1", pending)
	}
	if age := metricValue(t, m, "plantstore_webhook_oldest_pending_seconds"); age < 1 {
		t.Errorf("the oldest pending event is %vs old after 1.5s; want at least 1s", age)
	}
	ln, err = net.Listen("tcp", strings.TrimSuffix(strings.TrimPrefix(down, "http://"), "/"))
	if err != nil {
		t.Fatalf("the refusing port was taken meanwhile: %v", err)
	}
	late := newHookReceiver(t, secret, nil)
	late.srv.Close()
	late.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(late.serve)}}
	late.srv.Start()

	for _, r := range []*hookReceiver{failing, redirecting, late} {
		if got := r.deliveries(t, 1, 15*time.Second); got[0].body != `{"id":1,"name":"Fern"}` {
			t.Errorf("delivered %q", got[0].body)
		}
	}
	m = s.adminGet(t, "/metrics").body
	for _, line := range []string{`outcome="status"} 2`, `outcome="redirect"} 2`, `outcome="refused"}`, `outcome="delivered"} 3`} {
		if !strings.Contains(m, "plantstore_webhook_attempts_total{"+line) {
			t.Errorf("metrics lack attempts %s", line)
		}
	}
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
			s.create(t, `{"id":`+itoa(i)+`,"name":"Fern"}`).expect(t, 200, "")
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

// An event that is not delivered within its maximum age fails, is kept and
// counted; the operator lists them and redelivers them, by id or all.
func TestWebhookEventsFailAndAreRedelivered(t *testing.T) {
	forEachStore(t, testWebhookEventsFailAndAreRedelivered)
}

func testWebhookEventsFailAndAreRedelivered(t *testing.T, db string) {
	file, secret := newSecretFile(t)
	answer, bringUp := downUntilUp(500, 200)
	r := newHookReceiver(t, secret, answer)
	env := webhookEnv(file, r.srv.URL)
	env["PLANTSTORE_WEBHOOK_MAX_AGE"] = "1500ms"
	s := startService(t, db, env)
	s.create(t, `{"id":5,"name":"Fern"}`).expect(t, 200, "")
	s.create(t, `{"id":6,"name":"Ivy"}`).expect(t, 200, "")
	getenv := func(k string) (string, bool) {
		v, ok := map[string]string{"PLANTSTORE_DATABASE_URL": db}[k]
		return v, ok
	}
	var out strings.Builder
	// The failure is counted when decided and in the outbox once settled.
	deadline := time.Now().Add(15 * time.Second)
	for {
		out.Reset()
		if err := webhooks(t.Context(), []string{"list", "--failed"}, getenv, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if strings.Count(out.String(), "\n") == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the event did not fail; webhooks list --failed:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if line := strings.Split(out.String(), "\n")[1]; !strings.Contains(line, "failed") || !strings.Contains(line, "500") {
		t.Fatalf("webhooks list --failed:\n%s", out.String())
	}
	if !strings.Contains(s.adminGet(t, "/metrics").body, "plantstore_webhook_events_failed_total 2") {
		t.Error("the failures are not counted")
	}
	bringUp()
	// Redelivered by id beside one that is not a failed event: the failed
	// one is due again, the other is named and the command fails.
	failedID := strings.Fields(strings.Split(out.String(), "\n")[1])[0]
	out.Reset()
	err := webhooks(t.Context(), []string{"redeliver", "msg_unknown", failedID, "msg_unknown"}, getenv, &out, io.Discard)
	if err == nil || !strings.HasSuffix(err.Error(), "left as they were: msg_unknown") || !strings.HasPrefix(out.String(), "1 failed events are due again") {
		t.Fatalf("webhooks redeliver of a failed and an unknown id: %v %s", err, out.String())
	}
	// Then every failed event: the one left.
	out.Reset()
	if err := webhooks(t.Context(), []string{"redeliver", "--all"}, getenv, &out, io.Discard); err != nil || out.String() != "1 failed events are due again\n" {
		t.Fatalf("webhooks redeliver --all: %v %q", err, out.String())
	}
	r.deliveries(t, 2, 10*time.Second)
}

func TestWebhooksRedeliverSaysWhatItNeeds(t *testing.T) {
	getenv := func(k string) (string, bool) {
		v, ok := map[string]string{"PLANTSTORE_DATABASE_URL": "sqlite:" + t.TempDir() + "/p.db"}[k]
		return v, ok
	}
	for args, want := range map[string]string{
		"":              "give the ids of failed events, or --all",
		"--all msg_one": "give event ids or --all, not both",
	} {
		err := webhooks(t.Context(), append([]string{"redeliver"}, strings.Fields(args)...), getenv, io.Discard, io.Discard)
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("webhooks redeliver %s: %v; want %q", args, err, want)
		}
	}
}

// An event whose URL was taken out of the receivers is kept, listed and not
// sent; once the URL is configured again, it goes.
func TestEventsOfAReceiverNoLongerConfiguredWaitForIt(t *testing.T) {
	forEachStore(t, testEventsOfAReceiverNoLongerConfiguredWaitForIt)
}

func testEventsOfAReceiverNoLongerConfiguredWaitForIt(t *testing.T, db string) {
	file, secret := newSecretFile(t)
	answer, bringUp := downUntilUp(500, 204)
	removed := newHookReceiver(t, secret, answer)
	kept := newHookReceiver(t, secret, nil)
	t.Run("both configured", func(t *testing.T) { // the service stops with the subtest
		s := startService(t, db, webhookEnv(file, removed.srv.URL, kept.srv.URL))
		s.create(t, `{"id":1,"name":"Fern"}`).expect(t, 200, "")
		kept.deliveries(t, 1, 10*time.Second)
		for deadline := time.Now().Add(10 * time.Second); removed.attemptCount() == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no attempt to the receiver that answers 500")
			}
		}
	})
	tried := removed.attemptCount()
	bringUp()
	t.Run("one taken out", func(t *testing.T) {
		s := startService(t, db, webhookEnv(file, kept.srv.URL))
		s.create(t, `{"id":2,"name":"Ivy"}`).expect(t, 200, "")
		kept.deliveries(t, 2, 10*time.Second)
		time.Sleep(1500 * time.Millisecond) // past the retry's back-off, at most 1s
		if n := removed.attemptCount(); n != tried {
			t.Fatalf("%d attempts to a receiver no longer configured", n-tried)
		}
		getenv := func(k string) (string, bool) {
			v, ok := map[string]string{"PLANTSTORE_DATABASE_URL": db}[k]
			return v, ok
		}
		var out strings.Builder
		if err := webhooks(t.Context(), []string{"list"}, getenv, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), removed.srv.URL) {
			t.Fatalf("the waiting event is not listed:\n%s", out.String())
		}
	})
	startService(t, db, webhookEnv(file, removed.srv.URL, kept.srv.URL))
	if got := removed.deliveries(t, 1, 10*time.Second); got[0].body != `{"id":1,"name":"Fern"}` {
		t.Errorf("delivered %q once configured again", got[0].body)
	}
}

func (r *hookReceiver) attemptCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

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
// cores to spare for them.
func TestDeliveriesGiveWayAtEightRequestsPerCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3)) // a machine unlike any test machine
	for value, want := range map[string]int{"": 24, "auto": 24, "0": 0, "40": 40} {
		env := map[string]string{"PLANTSTORE_WEBHOOK_YIELD_AT": value}
		c, err := loadConfig("serve", nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", value, err)
		}
		if got := int(c.Webhook.YieldAt); got != want {
			t.Errorf("PLANTSTORE_WEBHOOK_YIELD_AT=%q gives %d; want %d", value, got, want)
		}
	}
	for _, bad := range []string{"-1", "many", "1.5"} {
		env := map[string]string{"PLANTSTORE_WEBHOOK_YIELD_AT": bad}
		_, err := loadConfig("serve", nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "PLANTSTORE_WEBHOOK_YIELD_AT") {
			t.Errorf("PLANTSTORE_WEBHOOK_YIELD_AT=%q: %v; want an error naming the setting", bad, err)
		}
	}
}

// A receiver's URL is its identity (its events, claims and attempt slots):
// one listed twice is refused with the setting's name and the URL.
func TestAReceiverListedTwiceIsRefused(t *testing.T) {
	env := map[string]string{"PLANTSTORE_WEBHOOK_URLS": "http://a.example/hook, http://b.example/hook,http://a.example/hook"}
	_, err := loadConfig("serve", nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "PLANTSTORE_WEBHOOK_URLS") || !strings.Contains(err.Error(), "http://a.example/hook twice") {
		t.Fatalf("a URL listed twice: %v; want an error naming the setting and the URL", err)
	}
}

// metricValue reads the value of an unlabelled metric from the Prometheus
// text format.
func metricValue(t *testing.T, metrics, name string) float64 {
	t.Helper()
	for line := range strings.SplitSeq(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// webhooks listen verifies and prints the events the service sends it, one
// JSON line each, and stops when its context ends.
func TestWebhooksListenPrintsVerifiedEvents(t *testing.T) {
	file, _ := newSecretFile(t)
	ctx, cancel := context.WithCancel(t.Context())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- webhooks(ctx, []string{"listen", "--addr", "127.0.0.1:0", "--secret-file", file}, noEnv, stdout, stderr)
	}()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cancel()
			<-done
		}
	})
	var url string
	for deadline := time.Now().Add(5 * time.Second); url == ""; time.Sleep(10 * time.Millisecond) {
		if _, rest, ok := strings.Cut(stderr.String(), "Receiving new-plant events at "); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhooks listen did not start: %s", stderr.String())
		}
	}
	s := startService(t, storeURLs()["sqlite"](t), webhookEnv(file, url))
	s.create(t, `{"id":7,"name":"Monstera deliciosa","tag":"aroid"}`).expect(t, 200, "")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stdout.String(), "\n"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("webhooks listen printed no event")
		}
	}
	var got map[string]any
	line, _, _ := strings.Cut(stdout.String(), "\n") // at least once: a repeat may follow
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("not a JSON line: %q: %v", line, err)
	}
	if got["id"] != 7.0 || got["name"] != "Monstera deliciosa" || got["tag"] != "aroid" || !strings.HasPrefix(fmt.Sprint(got["webhook_id"]), "msg_") {
		t.Errorf("printed %v", got)
	}
	cancel()
	stopped = true
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("webhooks listen ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("webhooks listen did not stop with its context")
	}
}

func noEnv(string) (string, bool) { return "", false }
