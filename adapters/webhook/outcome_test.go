package webhook

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
)

func TestSendOutcomeStatus(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("<html>\n\t<p>database\r\ndown \x00\xff</p>" + strings.Repeat("x", 500) + "SECRET-TAIL"))
	})
	err := newSender(t, Config{}).Send(context.Background(), event(t, rc.URL))
	de := deliveryError(t, err, "status")
	if de.Status != 500 {
		t.Errorf("Status = %d, want 500", de.Status)
	}
	if !errors.Is(err, application.ErrDelivery) {
		t.Error("the error does not match application.ErrDelivery")
	}
	want := "answered 500 Internal Server Error: <html> <p>database down \ufffd</p>xxx"
	if !strings.HasPrefix(de.Detail, want) {
		t.Errorf("Detail = %q, want it to start with %q", de.Detail, want)
	}
	if strings.Contains(de.Detail, "SECRET-TAIL") || len(de.Detail) > 300 {
		t.Errorf("Detail quotes more than the start of the answer: %d bytes", len(de.Detail))
	}
}

func TestSendOutcomeStatusWithoutBody(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })
	de := deliveryError(t, newSender(t, Config{}).Send(context.Background(), event(t, rc.URL)), "status")
	if de.Status != 429 || de.Detail != "answered 429 Too Many Requests" {
		t.Errorf("got %d %q", de.Status, de.Detail)
	}
}

func TestSendNeverFollowsRedirects(t *testing.T) {
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			target := newReceiver(t, nil)
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/elsewhere?token=hush", code)
			})
			de := deliveryError(t, newSender(t, Config{}).Send(context.Background(), event(t, rc.URL)), "redirect")
			if de.Status != code {
				t.Errorf("Status = %d, want %d", de.Status, code)
			}
			if !strings.Contains(de.Detail, target.Listener.Addr().String()) || strings.Contains(de.Detail, "hush") {
				t.Errorf("Detail = %q, want the target's host and not its query", de.Detail)
			}
			if n := target.requests.Load(); n != 0 {
				t.Errorf("the redirect's target got %d requests", n)
			}
		})
	}
}

func TestSendOutcomeTimeout(t *testing.T) {
	release := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		select { // answers only after the sender gave up
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	start := time.Now()
	// The attempt's timer and the transport's response header timeout race;
	// either way it is a timeout.
	deliveryError(t, newSender(t, Config{Timeout: 200 * time.Millisecond}).Send(context.Background(), event(t, rc.URL)), "timeout")
	within(t, start, 5*time.Second)
}

func TestSendOutcomeCallerDeadline(t *testing.T) {
	release := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	deliveryError(t, newSender(t, Config{}).Send(ctx, event(t, rc.URL)), "timeout")
	within(t, start, 5*time.Second)

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	de := deliveryError(t, newSender(t, Config{}).Send(ctx, event(t, rc.URL)), "error")
	if de.Detail != "the attempt was cancelled" {
		t.Errorf("Detail = %q", de.Detail)
	}
}

func TestSendOutcomeRefused(t *testing.T) {
	t.Run("closed port", func(t *testing.T) {
		url := closedURL(t)
		de := deliveryError(t, newSender(t, Config{}).Send(context.Background(), event(t, url+"/hook")), "refused")
		if !strings.Contains(de.Detail, "refused") {
			t.Errorf("Detail = %q", de.Detail)
		}
	})
	t.Run("unknown host", func(t *testing.T) {
		start := time.Now()
		de := deliveryError(t, newSender(t, Config{Timeout: 30 * time.Second}).Send(context.Background(), event(t, "http://nonexistent.invalid/hook")), "refused")
		within(t, start, 25*time.Second)
		if !strings.Contains(de.Detail, "nonexistent.invalid") {
			t.Errorf("Detail = %q, want the host named", de.Detail)
		}
	})
	t.Run("credentials in the URL stay out of the detail", func(t *testing.T) {
		url := strings.Replace(closedURL(t), "http://", "http://user:pa55word@", 1) + "/hook/t0ken?sig=s3cret"
		de := deliveryError(t, newSender(t, Config{}).Send(context.Background(), event(t, url)), "refused")
		for _, secret := range []string{"pa55word", "t0ken", "s3cret"} {
			if strings.Contains(de.Detail, secret) {
				t.Errorf("Detail = %q shows %q", de.Detail, secret)
			}
		}
	})
}

func TestSendOutcomeError(t *testing.T) {
	s := newSender(t, Config{})
	for _, url := range []string{"://nope/t0ken", "ftp://example.com/t0ken", "http:///t0ken", ""} {
		de := deliveryError(t, s.Send(context.Background(), event(t, url)), "error")
		if strings.Contains(de.Detail, "t0ken") {
			t.Errorf("%q: Detail = %q shows the URL", url, de.Detail)
		}
	}
	rc := newReceiver(t, nil)
	e := event(t, rc.URL)
	e.ID = ""
	deliveryError(t, s.Send(context.Background(), e), "error")
	if n := rc.requests.Load(); n != 0 {
		t.Errorf("an event without an id was sent")
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 200, "plain"},
		{"  a\r\n\tb  \x00 c ", 200, "a b c"},
		{"bad \xff byte", 200, "bad \ufffd byte"},
		{"\u2028line\u00a0sep", 200, "line sep"},
		{"héllo", 2, "h"},   // é does not fit beside h
		{"h\xc3", 200, "h"}, // a character cut by a bounded read
		{"abcdef", 4, "abcd"},
		{"abc def", 4, "abc"},
		{"grüne Wüste", 200, "grüne Wüste"},
	}
	for _, tt := range tests {
		if got := sanitize([]byte(tt.in), tt.max); got != tt.want {
			t.Errorf("sanitize(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}
