package webhook

import (
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// testKey is 32 bytes, the usual length; testSecretText is its whsec_ form,
// which the reference library takes as it is.
var (
	testKey        = []byte("0123456789abcdef0123456789ABCDEF")
	testSecretText = "whsec_" + base64.StdEncoding.EncodeToString(testKey)
)

func testSecret(t testing.TB) Secret {
	t.Helper()
	s, err := ParseSecret(testSecretText)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustPlant(t testing.TB, id int64, name string, tag *string) domain.Plant {
	t.Helper()
	p, err := domain.RestorePlant(domain.PlantFields{ID: id, Name: name, Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ptr(s string) *string { return &s }

func newSender(t testing.TB, cfg Config) *Sender {
	t.Helper()
	s, err := NewSender(testSecret(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.CloseIdleConnections)
	return s
}

func event(t testing.TB, url string) application.Event {
	return eventOf("evt_1_0", url, mustPlant(t, 7, "Fern", ptr("green")))
}

// eventOf is the event id to url about p, rendered as a store keeps it.
func eventOf(id, url string, p domain.Plant) application.Event {
	return application.Event{ID: id, URL: url, PlantID: p.ID(), Item: plantjson.AppendItem(nil, p)}
}

// received is one request as a receiver saw it.
type received struct {
	method, path string
	header       http.Header
	body         []byte
}

// receiver is a real HTTP server that records what it gets, answers with
// answer (204 when nil) and counts the connections opened to it.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []received
	conns    atomic.Int64
	requests atomic.Int64
}

func newReceiver(t testing.TB, answer http.HandlerFunc) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.requests.Add(1)
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{r.Method, r.URL.RequestURI(), r.Header.Clone(), body})
		rc.mu.Unlock()
		if answer != nil {
			answer(w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	rc.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rc.conns.Add(1)
		}
	}
	rc.Start()
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) only(t testing.TB) received {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 1 {
		t.Fatalf("the receiver got %d requests, want 1", len(rc.got))
	}
	return rc.got[0]
}

// deliveryError asserts that err is a DeliveryError with this outcome.
func deliveryError(t testing.TB, err error, outcome string) *application.DeliveryError {
	t.Helper()
	de, ok := err.(*application.DeliveryError)
	if !ok {
		t.Fatalf("error = %#v, want an *application.DeliveryError", err)
	}
	if de.Outcome != outcome {
		t.Fatalf("outcome = %q (%s), want %q", de.Outcome, de.Detail, outcome)
	}
	if strings.Contains(de.Detail, base64.StdEncoding.EncodeToString(testKey)) || strings.Contains(de.Detail, string(testKey)) {
		t.Fatalf("detail %q shows the key", de.Detail)
	}
	return de
}

// closedURL is an http URL of a local port that nothing listens on.
func closedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// within fails when a Send took longer than it may: outcomes that must come
// promptly are checked with a generous bound, not a tight timing.
func within(t testing.TB, start time.Time, limit time.Duration) {
	t.Helper()
	if took := time.Since(start); took > limit {
		t.Fatalf("the attempt took %v, want under %v", took, limit)
	}
}
