package webhook

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

var (
	verifyNow  = time.Unix(1_750_000_000, 0)
	verifyBody = []byte(`{"id":7,"name":"Fern","tag":"green"}`)
)

func signedHeader(t *testing.T, id string, at time.Time, body []byte) http.Header {
	t.Helper()
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, Sign(testSecret(t), id, at, body))
	return h
}

func TestVerifyAccepts(t *testing.T) {
	secret := testSecret(t)
	good := Sign(secret, "evt_1", verifyNow, verifyBody)
	tests := []struct {
		name   string
		at     time.Time
		mutate func(h http.Header)
	}{
		{"as signed", verifyNow, func(http.Header) {}},
		{"five minutes old", verifyNow.Add(-Tolerance), func(http.Header) {}},
		{"five minutes ahead", verifyNow.Add(Tolerance), func(http.Header) {}},
		{"one of several signatures", verifyNow, func(h http.Header) {
			h.Set(HeaderSignature, "v1,AAAA v2,whatever "+Sign(secret, "evt_1", verifyNow, verifyBody)+" v1,bm9wZQ==")
		}},
		{"signatures on two lines", verifyNow, func(h http.Header) {
			h.Set(HeaderSignature, "v1,bm9wZQ==")
			h.Add(HeaderSignature, good)
		}},
		{"signatures split by a tab", verifyNow, func(h http.Header) {
			h.Set(HeaderSignature, "v1,bm9wZQ==\t"+good)
		}},
		{"lower-case names", verifyNow, func(h http.Header) {
			for k, v := range h {
				delete(h, k)
				h[http.CanonicalHeaderKey(k)] = v
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := signedHeader(t, "evt_1", tt.at, verifyBody)
			tt.mutate(h)
			if err := Verify(secret, h, verifyBody, verifyNow); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestVerifyAcceptsTheReferenceLibrary(t *testing.T) {
	reference, err := standardwebhooks.NewWebhook(testSecretText)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sig, err := reference.Sign("msg_2", now, verifyBody)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set(HeaderID, "msg_2")
	h.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(HeaderSignature, sig)
	if err := Verify(testSecret(t), h, verifyBody, now); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyRefuses(t *testing.T) {
	other, err := ParseSecret(whsec(32))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		secret Secret
		at     time.Time
		body   []byte
		mutate func(h http.Header)
		want   error
	}{
		{"tampered body", testSecret(t), verifyNow, []byte(`{"id":7,"name":"Fern","tag":"gre3n"}`), nil, ErrSignature},
		{"wrong secret", other, verifyNow, verifyBody, nil, ErrSignature},
		{"other id", testSecret(t), verifyNow, verifyBody, func(h http.Header) { h.Set(HeaderID, "evt_2") }, ErrSignature},
		{"moved timestamp", testSecret(t), verifyNow, verifyBody, func(h http.Header) {
			h.Set(HeaderTimestamp, strconv.FormatInt(verifyNow.Unix()+1, 10))
		}, ErrSignature},
		{"other version", testSecret(t), verifyNow, verifyBody, func(h http.Header) {
			h.Set(HeaderSignature, "v1a"+h.Get(HeaderSignature)[2:])
		}, ErrSignature},
		{"stale", testSecret(t), verifyNow.Add(-Tolerance - time.Second), verifyBody, nil, ErrTimestamp},
		{"future", testSecret(t), verifyNow.Add(Tolerance + time.Second), verifyBody, nil, ErrTimestamp},
		{"signed timestamp with a sign", testSecret(t), verifyNow, verifyBody, func(h http.Header) {
			h.Set(HeaderTimestamp, "+"+h.Get(HeaderTimestamp))
		}, ErrTimestamp},
		{"timestamp in milliseconds", testSecret(t), verifyNow, verifyBody, func(h http.Header) {
			h.Set(HeaderTimestamp, h.Get(HeaderTimestamp)+"000")
		}, ErrSignature},
		{"no id", testSecret(t), verifyNow, verifyBody, func(h http.Header) { h.Del(HeaderID) }, ErrMissingHeader},
		{"no timestamp", testSecret(t), verifyNow, verifyBody, func(h http.Header) { h.Del(HeaderTimestamp) }, ErrMissingHeader},
		{"no signature", testSecret(t), verifyNow, verifyBody, func(h http.Header) { h.Del(HeaderSignature) }, ErrMissingHeader},
		{"a second comma after the signature", testSecret(t), verifyNow, verifyBody, func(h http.Header) {
			h.Set(HeaderSignature, h.Get(HeaderSignature)+",v1")
		}, ErrSignature},
		{"only white space", testSecret(t), verifyNow, verifyBody, func(h http.Header) { h.Set(HeaderSignature, " \t ") }, ErrSignature},
		{"empty signature", testSecret(t), verifyNow, verifyBody, func(h http.Header) { h.Set(HeaderSignature, "") }, ErrSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := signedHeader(t, "evt_1", tt.at, verifyBody)
			if tt.mutate != nil {
				tt.mutate(h)
			}
			err := Verify(tt.secret, h, tt.body, verifyNow)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
		})
	}
	if err := Verify(Secret{}, signedHeader(t, "evt_1", verifyNow, verifyBody), verifyBody, verifyNow); err == nil {
		t.Error("the zero Secret verified a message")
	}
}
