package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// InFlight counts a request from its start to its answer, so that
// background work sees the clients' demand; a refusal leaves no count
// behind.
func TestInFlightCountsRequestsBeingServed(t *testing.T) {
	api := newTestAPI(t, seededStore(t), DefaultMaxBodyBytes)
	body, send := io.Pipe()
	req := httptest.NewRequest(http.MethodPost, "/plants", body)
	req.Header.Set("Authorization", bearer(t))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); api.ServeHTTP(w, req) }()
	// The request gives no sign of having begun but the count itself.
	require.Eventually(t, func() bool { return api.InFlight() == 1 }, time.Minute, time.Millisecond,
		"requests in flight while one reads its body; want 1")
	refused := record(t, api, httptest.NewRequest(http.MethodGet, "/plants/1", nil)) // no token: 401
	if refused.Code != http.StatusUnauthorized || api.InFlight() != 1 {
		t.Fatalf("after a refusal (%d): %d in flight; want the one still reading", refused.Code, api.InFlight())
	}
	_, _ = io.WriteString(send, `{"id":2,"name":"Basil"}`)
	_ = send.Close()
	<-done
	contract(t).Check(t, req, w.Result(), w.Body.Bytes())
	if w.Code != http.StatusOK || api.InFlight() != 0 {
		t.Fatalf("after the answer (%d %s): %d in flight; want 0", w.Code, w.Body, api.InFlight())
	}
}
