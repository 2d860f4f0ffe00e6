// Package webhooktest is a webhook receiver for tests: a real HTTP server
// that verifies every delivery with the Standard Webhooks reference library
// (the way receivers verify them; that the library agrees with the
// specification's own example is pinned in adapters/webhook's tests),
// answers each attempt by a script, records the verified deliveries, and
// waits for what a test expects to arrive.
package webhooktest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Delivery is one verified attempt that the receiver answered 2xx.
type Delivery struct {
	ID   string // the webhook-id header: the event's id
	Body string
}

// Receiver is a webhook receiver for one test. Build it with NewReceiver;
// its methods are safe for concurrent use.
type Receiver struct {
	// URL is where the receiver listens, without a path: any path reaches it.
	URL string

	t        testing.TB
	verifier *standardwebhooks.Webhook
	script   func(attempt int) int
	hold     bool

	mu       sync.Mutex
	attempts int
	got      []Delivery

	waiting  atomic.Int64
	pass     chan struct{} // each token lets one held attempt through
	released chan struct{} // closed by Release
	once     sync.Once
}

// Option changes how a Receiver answers.
type Option func(*Receiver)

// Answering answers the nth attempt (counted from 1, over every event)
// with the status script returns; without it, every attempt gets 204.
func Answering(script func(attempt int) int) Option {
	return func(r *Receiver) { r.script = script }
}

// Holding makes every attempt wait until Let lets it through or Release
// releases them all. An attempt whose sender goes away while it waits is
// dropped: it counts as neither an attempt nor a delivery, as a receiver
// that never answered it.
func Holding() Option {
	return func(r *Receiver) { r.hold = true }
}

// DownUntilUp is a script that answers down until bringUp is called, then
// up: a receiver that is out of service, then back.
func DownUntilUp(down, up int) (script func(attempt int) int, bringUp func()) {
	var isUp atomic.Bool
	return func(int) int {
		if isUp.Load() {
			return up
		}
		return down
	}, func() { isUp.Store(true) }
}

// NewReceiver starts a receiver that verifies with secret, a whsec_ secret,
// and stops it when the test ends. A delivery that does not verify, or is
// not a JSON POST, is answered 400 and reported as a test error.
func NewReceiver(t testing.TB, secret string, opts ...Option) *Receiver {
	t.Helper()
	v, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("webhooktest: the secret: %v", err)
	}
	r := &Receiver{t: t, verifier: v, pass: make(chan struct{}, 1024), released: make(chan struct{})}
	for _, o := range opts {
		o(r)
	}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = srv.URL
	t.Cleanup(srv.Close)
	t.Cleanup(r.Release) // runs before Close, which waits for held attempts
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	// Reading the body first also makes net/http watch the connection and
	// end the request's context when the sender goes away.
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	if err := r.verifier.Verify(body, req.Header); err != nil || req.Method != http.MethodPost ||
		req.Header.Get("Content-Type") != "application/json" {
		r.t.Errorf("webhooktest: a delivery that does not verify: %s %q %v", req.Method, body, err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if r.hold && !r.wait(req) {
		return
	}
	r.mu.Lock()
	r.attempts++
	attempt := r.attempts
	r.mu.Unlock()
	status := http.StatusNoContent
	if r.script != nil {
		status = r.script(attempt)
	}
	if status < 300 {
		r.mu.Lock()
		r.got = append(r.got, Delivery{ID: req.Header.Get("webhook-id"), Body: string(body)})
		r.mu.Unlock()
	}
	if status >= 300 && status < 400 {
		w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
	}
	w.WriteHeader(status)
}

// wait holds an attempt and reports whether its sender is still there.
func (r *Receiver) wait(req *http.Request) bool {
	r.waiting.Add(1)
	defer r.waiting.Add(-1)
	select {
	case <-r.pass:
	case <-r.released:
	case <-req.Context().Done():
	}
	return req.Context().Err() == nil
}

// Let lets n held attempts through, those waiting now or the next ones.
func (r *Receiver) Let(n int) {
	for range n {
		r.pass <- struct{}{}
	}
}

// Release lets every held attempt through, now and from now on.
func (r *Receiver) Release() { r.once.Do(func() { close(r.released) }) }

// Held is how many attempts wait now.
func (r *Receiver) Held() int { return int(r.waiting.Load()) }

// Attempts is how many verified attempts were answered, delivered or not.
func (r *Receiver) Attempts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts
}

// Deliveries is what was delivered so far, in order of arrival.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.got...)
}

// PerPlant counts the deliveries per plant id (read from the body: the
// plant, or an envelope's data.plant), and how many deliveries repeated an
// event already delivered.
func (r *Receiver) PerPlant() (perPlant map[int64]int, repeated int) {
	perPlant, seen := map[int64]int{}, map[string]bool{}
	for _, d := range r.Deliveries() {
		var body struct {
			ID   int64
			Data *struct{ Plant struct{ ID int64 } }
		}
		if err := json.Unmarshal([]byte(d.Body), &body); err != nil {
			r.t.Errorf("webhooktest: a delivered body that is no plant nor envelope: %q", d.Body)
		}
		id := body.ID
		if body.Data != nil {
			id = body.Data.Plant.ID
		}
		perPlant[id]++
		if seen[d.ID] {
			repeated++
		}
		seen[d.ID] = true
	}
	return perPlant, repeated
}

// Envelope is a delivered body of the event payload: the Standard Webhooks
// envelope of an event as the feed lists it.
type Envelope struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      struct {
		ID     string    `json:"id"`
		Type   string    `json:"type"`
		Number int64     `json:"number"`
		Time   time.Time `json:"time"`
		// Plant is the plant's JSON as it came, byte for byte.
		Plant json.RawMessage `json:"plant"`
	} `json:"data"`
}

// Envelopes reads every delivery so far as an envelope, in order of
// arrival, each with its webhook-id; a body that is none is a test error.
func (r *Receiver) Envelopes() (envelopes []Envelope, ids []string) {
	for _, d := range r.Deliveries() {
		var e Envelope
		dec := json.NewDecoder(strings.NewReader(d.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || e.Type == "" || e.Data.ID == "" {
			r.t.Errorf("webhooktest: a delivered body that is no envelope: %q (%v)", d.Body, err)
			continue
		}
		envelopes, ids = append(envelopes, e), append(ids, d.ID)
	}
	return envelopes, ids
}

// NewSecretFile writes a fresh whsec_ secret, with a line ending, to a file
// of the test's own and returns the file's path and the secret.
func NewSecretFile(t testing.TB) (path, secret string) {
	t.Helper()
	var key [32]byte
	_, _ = rand.Read(key[:])
	secret = "whsec_" + base64.StdEncoding.EncodeToString(key[:])
	path = filepath.Join(t.TempDir(), "webhook-secret")
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, secret
}
