package main

import (
	"io"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// While the API drains, the admin listener still answers: readiness says
// 503 and metrics can be scraped until the last API request is answered.
func TestTheAdminListenerAnswersWhileTheAPIDrains(t *testing.T) {
	p := startProcess(t, "sqlite:"+filepath.Join(t.TempDir(), "plants.db"),
		map[string]string{"PLANTSTORE_SHUTDOWN_TIMEOUT": shutdownGrace.String()})
	c := newCreator(t, p, 1)
	// A create whose body is still on its way holds the API's drain open.
	// The client sends the body only after the 100 Continue, which says the
	// handler has begun to read it.
	const fern = `{"id":1,"name":"Fern"}`
	body, sender := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, p.api+"/plants", body)
	require.NoError(t, err)
	req.ContentLength = int64(len(fern))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	c.client.Transport = &http.Transport{ExpectContinueTimeout: time.Minute}
	created := make(chan answer, 1)
	go func() { created <- exchange(t, c.client, c.contract, req) }()
	// The write returns once the client reads the body: after the 100 Continue.
	_, err = io.WriteString(sender, fern[:1])
	require.NoError(t, err)

	p.signal(t, syscall.SIGTERM)
	require.Eventually(t, func() bool { status, _ := adminGet(p.admin, "/readyz"); return status == http.StatusServiceUnavailable },
		5*time.Second, 20*time.Millisecond, "readiness answers 503 while the API drains")
	if status, _ := adminGet(p.admin, "/metrics"); status != http.StatusOK {
		t.Fatalf("metrics while the API drains: %d", status)
	}
	if p.hasExited() {
		t.Fatal("the service exited with a request in flight")
	}
	_, _ = io.WriteString(sender, fern[1:])
	_ = sender.Close()
	if a := <-created; a.err != nil || a.status != http.StatusOK {
		t.Fatalf("the create in flight at SIGTERM: %v", a)
	}
	if state := p.waitExit(t, shutdownGrace); state.ExitCode() != 0 {
		t.Fatalf("exit %v", state)
	}
}
