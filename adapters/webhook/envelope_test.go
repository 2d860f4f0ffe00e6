package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/docs/openapitest"
	"github.com/plantstore/plantstore/domain"
)

// envelopeOf is the delivery to url of the event numbered number, of type
// typ, about p, as a store keeps it with the event payload.
func envelopeOf(id, url string, typ application.EventType, number int64, at time.Time, p domain.Plant) application.Event {
	e := eventOf(id, url, p)
	e.Type, e.Number, e.CreatedAt = typ, number, at
	return e
}

// headerNames are the names of h, sorted.
func headerNames(h http.Header) []string {
	var names []string
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// With the event payload, every type of event goes as the Standard Webhooks
// envelope of the event as the feed lists it, its timestamp the commit in
// UTC; the message carries the headers of a plant's delivery, no more and
// no less, and the reference library verifies it.
func TestSendDeliversASignedEnvelope(t *testing.T) {
	reference, err := standardwebhooks.NewWebhook(testSecretText)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 31, 12, 500_000_000, time.FixedZone("CET", 3600))
	tests := []struct {
		typ      application.EventType
		plant    domain.Plant
		wantBody string
	}{
		{application.PlantCreated, mustPlant(t, 7, "Fern", ptr("green")),
			`{"type":"plant.created","timestamp":"2026-12-01T09:31:12.5Z","data":{"id":"evt_1042","type":"plant.created","number":1042,"time":"2026-12-01T09:31:12.5Z","plant":{"id":7,"name":"Fern","tag":"green"}}}`},
		{application.PlantChanged, mustPlant(t, -3, `say "hi" \ <b>`, nil),
			`{"type":"plant.changed","timestamp":"2026-12-01T09:31:12.5Z","data":{"id":"evt_1042","type":"plant.changed","number":1042,"time":"2026-12-01T09:31:12.5Z","plant":{"id":-3,"name":"say \"hi\" \\ <b>"}}}`},
		{application.PlantDeleted, mustPlant(t, 9223372036854775807, "Ficus 🌿", ptr("e\u0301té\u2028")),
			"{\"type\":\"plant.deleted\",\"timestamp\":\"2026-12-01T09:31:12.5Z\",\"data\":{\"id\":\"evt_1042\",\"type\":\"plant.deleted\",\"number\":1042,\"time\":\"2026-12-01T09:31:12.5Z\",\"plant\":{\"id\":9223372036854775807,\"name\":\"Ficus 🌿\",\"tag\":\"e\u0301té\u2028\"}}}"},
	}
	plainRC := newReceiver(t, nil)
	if err := newSender(t, Config{}).Send(context.Background(), event(t, plainRC.URL)); err != nil {
		t.Fatal(err)
	}
	plantHeaders := headerNames(plainRC.only(t).header)
	for _, tt := range tests {
		t.Run(string(tt.typ), func(t *testing.T) {
			rc := newReceiver(t, nil)
			e := envelopeOf("msg_"+string(tt.typ), rc.URL+"/hooks?x=1", tt.typ, 1042, at, tt.plant)
			before := time.Now().Unix()
			if err := newSender(t, Config{}).Send(context.Background(), e); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := rc.only(t)
			if string(got.body) != tt.wantBody {
				t.Errorf("body = %s\nwant   %s", got.body, tt.wantBody)
			}
			if !json.Valid(got.body) {
				t.Errorf("body %s is not JSON", got.body)
			}
			if names := headerNames(got.header); !slices.Equal(names, plantHeaders) {
				t.Errorf("headers = %v; a plant's delivery has %v", names, plantHeaders)
			}
			h := got.header
			for name, want := range map[string]string{
				"Content-Type":   "application/json",
				"User-Agent":     UserAgent,
				"Webhook-Id":     e.ID,
				"Content-Length": strconv.Itoa(len(tt.wantBody)),
			} {
				if v := h.Values(name); len(v) != 1 || v[0] != want {
					t.Errorf("%s = %q, want %q", name, v, want)
				}
			}
			if ts, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64); err != nil || ts < before || ts > time.Now().Unix() {
				t.Errorf("webhook-timestamp = %q, want the Unix seconds of the attempt", h.Get(HeaderTimestamp))
			}
			if err := reference.Verify(got.body, h); err != nil {
				t.Errorf("the Standard Webhooks reference library refuses the message: %v", err)
			}
		})
	}
}

// Every attempt of one event carries the same body and webhook-id, and a
// signature of its own timestamp.
func TestEveryAttemptOfAnEnvelopeIsTheSame(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	e := envelopeOf("msg_1", rc.URL, application.PlantDeleted, 5, time.Now(), mustPlant(t, 7, "Fern", nil))
	s := newSender(t, Config{})
	for range 2 {
		deliveryError(t, s.Send(context.Background(), e), "status")
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.got) != 2 || !bytes.Equal(rc.got[0].body, rc.got[1].body) || rc.got[0].header.Get(HeaderID) != rc.got[1].header.Get(HeaderID) {
		t.Fatalf("attempts %+v; want the same body and webhook-id twice", rc.got)
	}
}

// An event whose plant the store did not keep as JSON (a row written
// around the service) is an attempt that fails without reaching the
// receiver, so that it is retried and, past its age, kept as failed.
func TestSendRefusesAnEnvelopeOfNoPlant(t *testing.T) {
	rc := newReceiver(t, nil)
	e := envelopeOf("msg_1", rc.URL, application.PlantChanged, 5, time.Now(), mustPlant(t, 7, "Fern", nil))
	e.Item = []byte(`{"id":7,`)
	deliveryError(t, newSender(t, Config{}).Send(context.Background(), e), "error")
	if n := rc.requests.Load(); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

// The receiving side reads both bodies the sender sends: a new plant, and
// an event in its envelope.
func TestReceiverTakesEnvelopes(t *testing.T) {
	l := newListener(t)
	at := time.Now().Add(-time.Minute).Round(time.Microsecond)
	fern, moss := mustPlant(t, 7, "Fern", ptr("green")), mustPlant(t, -8, "Moss", nil)
	sent := []application.Event{
		eventOf("msg_0", l.URL, fern),
		envelopeOf("msg_1", l.URL, application.PlantChanged, 41, at, fern),
		envelopeOf("msg_2", l.URL, application.PlantDeleted, 42, at, moss),
	}
	s := newSender(t, Config{})
	for _, e := range sent {
		if err := s.Send(context.Background(), e); err != nil {
			t.Fatalf("%s: %v", e.ID, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.got) != len(sent) {
		t.Fatalf("delivered %d, want %d", len(l.got), len(sent))
	}
	for i, d := range l.got {
		e := sent[i]
		wantEvent := ""
		if e.Type != "" {
			wantEvent = plantjson.EventID(e.Number)
		}
		if d.ID != e.ID || d.Type != string(e.Type) || d.EventID != wantEvent || d.Number != e.Number ||
			!d.Committed.Equal(e.CreatedAt) || int64(d.Plant.ID()) != int64(e.PlantID) {
			t.Errorf("delivery %d = %+v, want %+v", i, d, e)
		}
	}
}

func TestReceiverRefusesBadEnvelopes(t *testing.T) {
	l := newListener(t)
	const data = `"data":{"id":"evt_1","type":"plant.created","number":1,"time":"2026-12-01T09:31:12Z","plant":{"id":7,"name":"Fern"}}`
	for name, body := range map[string]string{
		"no type":             `{"timestamp":"2026-12-01T09:31:12Z",` + data + `}`,
		"no timestamp":        `{"type":"plant.created",` + data + `}`,
		"another type":        `{"type":"plant.deleted","timestamp":"2026-12-01T09:31:12Z",` + data + `}`,
		"no number":           `{"type":"plant.created","timestamp":"2026-12-01T09:31:12Z","data":{"id":"evt_1","type":"plant.created","time":"2026-12-01T09:31:12Z","plant":{"id":7,"name":"Fern"}}}`,
		"a plant that is not": `{"type":"plant.created","timestamp":"2026-12-01T09:31:12Z","data":{"id":"evt_1","type":"plant.created","number":1,"time":"2026-12-01T09:31:12Z","plant":{"id":7,"name":""}}}`,
		"data not an object":  `{"type":"plant.created","timestamp":"2026-12-01T09:31:12Z","data":7}`,
	} {
		t.Run(name, func(t *testing.T) {
			now := time.Now()
			req, _ := http.NewRequest(http.MethodPost, l.URL, bytes.NewReader([]byte(body)))
			req.Header = signedHeader(t, "msg_3", now, []byte(body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want 400", resp.StatusCode)
			}
		})
	}
	if len(l.got) != 0 {
		t.Errorf("refused envelopes were delivered: %+v", l.got)
	}
}

// What the sender posts, of either payload, is what the OpenAPI document's
// webhooks section declares: newPlant's body, or plantEvent's envelope of
// the feed's Event, each with its headers.
func TestDeliveriesAreTheDocumentsWebhooks(t *testing.T) {
	contract := openapitest.Load(t)
	rc := newReceiver(t, nil)
	s := newSender(t, Config{})
	fern := mustPlant(t, 7, "Fern \"2\"", ptr("green"))
	at := time.Now()
	for _, e := range []application.Event{
		eventOf("msg_0", rc.URL, fern),
		envelopeOf("msg_1", rc.URL, application.PlantCreated, 1, at, fern),
		envelopeOf("msg_2", rc.URL, application.PlantChanged, 2, at, mustPlant(t, 7, "Moss", nil)),
		envelopeOf("msg_3", rc.URL, application.PlantDeleted, 3, at, mustPlant(t, 7, "Moss", nil)),
	} {
		if err := s.Send(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, got := range rc.got {
		contract.CheckWebhookRequest(t, got.header, got.body)
	}
}
