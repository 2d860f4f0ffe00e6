package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The HTTP settings reach the servers and the API: newServer applies every
// limit, and the wired API refuses a header block and a body over the
// configured limits. What each limit does to a client is tested in
// adapters/httpapi.
func TestLimitSettingsReachTheServers(t *testing.T) {
	hs := &httpSettings{ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second,
		IdleTimeout: 4 * time.Second, MaxHeaderBytes: 4096}
	srv := newServer(hs, http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	if srv.ReadHeaderTimeout != hs.ReadHeaderTimeout || srv.ReadTimeout != hs.ReadTimeout || srv.WriteTimeout != hs.WriteTimeout ||
		srv.IdleTimeout != hs.IdleTimeout || srv.MaxHeaderBytes != hs.MaxHeaderBytes || !srv.DisableGeneralOptionsHandler {
		t.Fatalf("server %+v does not apply the settings %+v", srv, hs)
	}

	s := startService(t, storeURLs()["sqlite"](t), map[string]string{
		"PLANTSTORE_MAX_HEADER_BYTES": "4096",
		"PLANTSTORE_MAX_BODY_BYTES":   "1024",
	})
	s.create(t, `{"id":1,"name":"`+strings.Repeat("a", 2000)+`"}`).expectError(t, 413, "41301")
	req, err := http.NewRequest(http.MethodGet, s.api+"/nope", nil)
	require.NoError(t, err)
	req.Header.Set("X-Big", strings.Repeat("a", 10<<10))
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	s.contract.CheckRefused(t, resp, body)
	if !strings.Contains(string(body), `"message":"headers: larger than the limit"`) {
		t.Fatalf("got %d %q, want the header limit named", resp.StatusCode, body)
	}
}
