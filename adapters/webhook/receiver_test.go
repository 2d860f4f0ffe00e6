package webhook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// listener is a receiver built by NewReceiver that keeps what it delivers.
type listener struct {
	*httptest.Server
	mu  sync.Mutex
	got []Delivery
}

func newListener(t *testing.T) *listener {
	l := &listener{}
	l.Server = httptest.NewServer(NewReceiver(testSecret(t), func(d Delivery) {
		l.mu.Lock()
		l.got = append(l.got, d)
		l.mu.Unlock()
	}))
	t.Cleanup(l.Close)
	return l
}

func TestReceiverTakesWhatTheSenderSends(t *testing.T) {
	l := newListener(t)
	sent := []domain.Plant{mustPlant(t, 7, `Fern "Boston" \ 🌿`, ptr("green")), mustPlant(t, -8, "Moss", nil)}
	plants := []application.Event{eventOf("evt_1", l.URL, sent[0]), eventOf("evt_2", l.URL, sent[1])}
	s := newSender(t, Config{})
	for _, e := range plants {
		if err := s.Send(context.Background(), e); err != nil {
			t.Fatalf("%s: %v", e.ID, err)
		}
	}
	if len(l.got) != len(plants) {
		t.Fatalf("delivered %d, want %d", len(l.got), len(plants))
	}
	for i, d := range l.got {
		if d.ID != plants[i].ID || d.Plant != sent[i] || time.Since(d.Sent) > time.Minute {
			t.Errorf("delivery %d = %+v, want the plant of %s", i, d, plants[i].ID)
		}
	}
}

func TestReceiverRefuses(t *testing.T) {
	l := newListener(t)
	other, err := ParseSecret(whsec(32))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":7,"name":"Fern"}`)
	tests := []struct {
		name   string
		method string
		secret Secret
		at     time.Time
		body   []byte
		want   int
	}{
		{"wrong secret", http.MethodPost, other, time.Now(), body, http.StatusUnauthorized},
		{"stale", http.MethodPost, testSecret(t), time.Now().Add(-10 * time.Minute), body, http.StatusUnauthorized},
		{"future", http.MethodPost, testSecret(t), time.Now().Add(10 * time.Minute), body, http.StatusUnauthorized},
		{"not JSON", http.MethodPost, testSecret(t), time.Now(), []byte(`Fern`), http.StatusBadRequest},
		{"an array", http.MethodPost, testSecret(t), time.Now(), []byte(`[7,"Fern"]`), http.StatusBadRequest},
		{"no name", http.MethodPost, testSecret(t), time.Now(), []byte(`{"id":7}`), http.StatusBadRequest},
		{"empty name", http.MethodPost, testSecret(t), time.Now(), []byte(`{"id":7,"name":""}`), http.StatusBadRequest},
		{"id as a string", http.MethodPost, testSecret(t), time.Now(), []byte(`{"id":"7","name":"Fern"}`), http.StatusBadRequest},
		{"duplicate name", http.MethodPost, testSecret(t), time.Now(), []byte(`{"id":7,"name":"a","name":"b"}`), http.StatusBadRequest},
		{"too large", http.MethodPost, testSecret(t), time.Now(), bytes.Repeat([]byte{' '}, 65<<10), http.StatusRequestEntityTooLarge},
		{"GET", http.MethodGet, testSecret(t), time.Now(), nil, http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, l.URL, bytes.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set(HeaderID, "evt_9")
			req.Header.Set(HeaderTimestamp, strconv.FormatInt(tt.at.Unix(), 10))
			req.Header.Set(HeaderSignature, Sign(tt.secret, "evt_9", tt.at, tt.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	if len(l.got) != 0 {
		t.Errorf("refused requests were delivered: %+v", l.got)
	}

	// A sender with another secret hears the 401 as a failed attempt.
	s, err := NewSender(other, Config{})
	if err != nil {
		t.Fatal(err)
	}
	de := deliveryError(t, s.Send(context.Background(), event(t, l.URL)), "status")
	if de.Status != http.StatusUnauthorized || !strings.Contains(de.Detail, "no webhook-signature matches") {
		t.Errorf("got %d %q", de.Status, de.Detail)
	}
}

func TestReceiverIgnoresUnknownMembers(t *testing.T) {
	l := newListener(t)
	body := []byte(`{"id":7,"name":"Fern","tag":null,"color":"green"}`)
	now := time.Now()
	req, _ := http.NewRequest(http.MethodPost, l.URL, bytes.NewReader(body))
	req.Header = signedHeader(t, "evt_3", now, body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || len(l.got) != 1 || l.got[0].Plant.Tag().IsSet() {
		t.Errorf("status %d, deliveries %+v", resp.StatusCode, l.got)
	}
}
