package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
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
	u, err := url.Parse(p.api)
	if err != nil {
		t.Fatal(err)
	}
	// A create whose body is still on its way holds the API's drain open.
	// The 100 Continue says the handler has begun to read it.
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	body := `{"id": 1, "name": "Fern"}`
	if _, err := fmt.Fprintf(conn, "POST /plants HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", u.Host, c.token, len(body)); err != nil {
		t.Fatal(err)
	}
	answers := bufio.NewReader(conn)
	if line, err := answers.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("want 100 Continue, got %q, %v", line, err)
	}
	if blank, err := answers.ReadString('\n'); err != nil || blank != "\r\n" {
		t.Fatalf("the 100 Continue ends with %q, %v", blank, err)
	}
	p.signal(t, syscall.SIGTERM)
	require.Eventually(t, func() bool { status, _ := p.adminGet("/readyz"); return status == http.StatusServiceUnavailable },
		5*time.Second, 20*time.Millisecond, "readiness answers 503 while the API drains")
	if status, _ := p.adminGet("/metrics"); status != http.StatusOK {
		t.Fatalf("metrics while the API drains: %d", status)
	}
	select {
	case <-p.exited:
		t.Fatal("the service exited with a request in flight")
	default:
	}
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	created, err := http.ReadResponse(answers, nil)
	if err != nil {
		t.Fatalf("the create in flight at SIGTERM got no answer: %v", err)
	}
	_ = created.Body.Close()
	if created.StatusCode != http.StatusOK {
		t.Fatalf("the create in flight at SIGTERM: %d", created.StatusCode)
	}
	if state := p.waitExit(t, shutdownGrace); state.ExitCode() != 0 {
		t.Fatalf("exit %v", state)
	}
}
