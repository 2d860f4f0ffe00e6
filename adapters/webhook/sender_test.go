package webhook

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/plantstore/plantstore/domain"
)

func TestSendDeliversASignedPlant(t *testing.T) {
	tests := []struct {
		name     string
		plant    domain.Plant
		wantBody string
	}{
		{"with a tag", mustPlant(t, 7, "Fern", ptr("green")), `{"id":7,"name":"Fern","tag":"green"}`},
		{"without a tag", mustPlant(t, -3, "Fern", nil), `{"id":-3,"name":"Fern"}`},
		{"unicode kept as is", mustPlant(t, 9223372036854775807, "Ficus 🌿 Größe 大", ptr("e\u0301té\u2028")), "{\"id\":9223372036854775807,\"name\":\"Ficus 🌿 Größe 大\",\"tag\":\"e\u0301té\u2028\"}"},
		{"quotes and backslashes escaped, HTML not", mustPlant(t, 0, `say "hi" \ <b>&amp;</b>`, ptr(`C:\plants\`)), `{"id":0,"name":"say \"hi\" \\ <b>&amp;</b>","tag":"C:\\plants\\"}`},
	}
	reference, err := standardwebhooks.NewWebhook(testSecretText)
	if err != nil {
		t.Fatal(err)
	}
	secret := testSecret(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newReceiver(t, nil)
			e := eventOf("evt_42_"+tt.name, rc.URL+"/hooks/plants?x=1", tt.plant)
			before := time.Now().Unix()
			if err := newSender(t, Config{}).Send(context.Background(), e); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := rc.only(t)
			if got.method != http.MethodPost || got.path != "/hooks/plants?x=1" {
				t.Errorf("request = %s %s, want POST /hooks/plants?x=1", got.method, got.path)
			}
			if string(got.body) != tt.wantBody {
				t.Errorf("body = %s\nwant   %s", got.body, tt.wantBody)
			}
			wantNames := []string{"Content-Length", "Content-Type", "User-Agent", "Webhook-Id", "Webhook-Signature", "Webhook-Timestamp"}
			if names := slices.Sorted(func(yield func(string) bool) {
				for k := range got.header {
					if !yield(k) {
						return
					}
				}
			}); !slices.Equal(names, wantNames) {
				t.Errorf("headers = %v, want %v", names, wantNames)
			}
			h := got.header
			for name, want := range map[string]string{
				"Content-Type":   "application/json",
				"User-Agent":     "plantstore-webhooks/1",
				"Webhook-Id":     e.ID,
				"Content-Length": strconv.Itoa(len(tt.wantBody)),
			} {
				if v := h.Values(name); len(v) != 1 || v[0] != want {
					t.Errorf("%s = %q, want %q", name, v, want)
				}
			}
			ts, err := strconv.ParseInt(h.Get("Webhook-Timestamp"), 10, 64)
			if err != nil || ts < before || ts > time.Now().Unix() {
				t.Errorf("webhook-timestamp = %q, want the Unix seconds of the attempt", h.Get("Webhook-Timestamp"))
			}
			if err := reference.Verify(got.body, h); err != nil {
				t.Errorf("the Standard Webhooks reference library refuses the message: %v", err)
			}
			if err := Verify(secret, h, got.body, time.Now()); err != nil {
				t.Errorf("Verify refuses the message: %v", err)
			}
		})
	}
}

func TestSendSignsLikeTheReferenceLibrary(t *testing.T) {
	// The reference library's own test inputs, at a fixed time; the
	// expected value is the reference library's signature.
	secret, err := ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := Sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestSendReusesConnections(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"ok":true}`)) // a small body, drained by the sender
	})
	s := newSender(t, Config{})
	for range 20 {
		if err := s.Send(context.Background(), event(t, rc.URL)); err != nil {
			t.Fatal(err)
		}
	}
	if n := rc.conns.Load(); n != 1 {
		t.Errorf("20 sends in a row opened %d connections, want 1", n)
	}

	// Concurrent sends keep their connections too: 80 sends from 8 senders
	// open about 8, a few more when a send starts while a finished
	// connection is still on its way back to the pool.
	const workers = 8
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range 10 {
				if err := s.Send(context.Background(), event(t, rc.URL)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := rc.conns.Load(); n > 3*workers {
		t.Errorf("%d concurrent senders opened %d connections", workers, n)
	}
}

func TestSendDeliveredDespiteALargeAnswer(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		chunk := make([]byte, 64<<10)
		for range 64 { // 4 MiB, more than the sender reads
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	if err := newSender(t, Config{}).Send(context.Background(), event(t, rc.URL)); err != nil {
		t.Fatalf("a 200 with a large body: %v, want delivered", err)
	}
}

func TestNewSenderRefuses(t *testing.T) {
	if _, err := NewSender(Secret{}, Config{}); err == nil {
		t.Error("NewSender took the zero Secret")
	}
	if _, err := NewSender(testSecret(t), Config{Timeout: -time.Second}); err == nil {
		t.Error("NewSender took a negative timeout")
	}
}

func TestSendUsesCredentialsInTheURL(t *testing.T) {
	rc := newReceiver(t, nil)
	url := strings.Replace(rc.URL, "http://", "http://hook:pa55@", 1)
	if err := newSender(t, Config{}).Send(context.Background(), event(t, url)); err != nil {
		t.Fatal(err)
	}
	if got := rc.only(t).header.Get("Authorization"); got != "Basic aG9vazpwYTU1" {
		t.Errorf("Authorization = %q, want basic credentials hook:pa55", got)
	}
}

func TestSendLogsOneDebugLinePerAttempt(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	url := strings.Replace(rc.URL, "http://", "http://hook:pa55@", 1) + "/t0ken"
	_ = newSender(t, Config{Logger: log}).Send(context.Background(), event(t, url))
	line := logged.String()
	for _, want := range []string{`"msg":"webhook attempt"`, `"event":"evt_1_0"`, `"outcome":"status"`, `"status":502`} {
		if !strings.Contains(line, want) {
			t.Errorf("log %s lacks %s", line, want)
		}
	}
	if strings.Contains(line, "pa55") || strings.Contains(line, "t0ken") || strings.Count(line, "\n") != 1 {
		t.Errorf("log %s: want one line without the URL", line)
	}
}
