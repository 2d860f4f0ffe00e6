package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/httpapi"
	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
)

// The connection limits reach both listeners: PLANTSTORE_MAX_CONNECTIONS
// and PLANTSTORE_MAX_CONNECTIONS_PER_CLIENT the API's, whose refusals are
// the contract's 503, and the admin listener's fixed cap. What a client
// meets at a limit is tested in adapters/httpapi.
func TestConnectionLimitsReachTheListeners(t *testing.T) {
	cfg, err := loadConfig("serve", nil, envOf(nil), io.Discard)
	require.NoError(t, err)
	if cfg.API.MaxConnections != httpapi.DefaultMaxConnections {
		t.Errorf("PLANTSTORE_MAX_CONNECTIONS defaults to %d, the adapter to %d", cfg.API.MaxConnections, httpapi.DefaultMaxConnections)
	}
	if share := cfg.API.admission().PerClient; share != httpapi.DefaultMaxConnections/4 {
		t.Errorf("PLANTSTORE_MAX_CONNECTIONS_PER_CLIENT comes to %d by default, want a quarter of the cap", share)
	}

	s := startService(t, storeURLs()["sqlite"](t), map[string]string{
		"PLANTSTORE_MAX_CONNECTIONS":            "3",
		"PLANTSTORE_MAX_CONNECTIONS_PER_CLIENT": "2",
	})
	// Connections in a request cannot make room.
	holdBusy(t, s, loopback(1))
	holdBusy(t, s, loopback(1))
	require.Eventually(t, func() bool {
		_, metrics := adminGet(s.admin, "/metrics")
		return openConnections(metrics) == 2
	}, time.Minute, 10*time.Millisecond, "the API listener never counted the two connections held")
	expectRefused(t, s, loopback(1), "this client address holds its share")
	holdBusy(t, s, loopback(2))
	expectRefused(t, s, loopback(2), "the service is at its connection limit")

	for range adminMaxConnections {
		holdSilent(t, s.admin)
	}
	resp, body := refusedAt(t, s.admin, "GET /healthz HTTP/1.1\r\nHost: plantstore\r\n\r\n")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the admin listener at its limit answered %d %q", resp.StatusCode, body)
	}
}

// loopback is the loopback address 127.0.0.n, a client address of its own.
func loopback(n byte) *net.TCPAddr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, n)} }

// holdBusy opens a connection from the address from to s's API that sends
// the start of a create and no more, so that its request holds its place
// until the test ends.
func holdBusy(t *testing.T, s *service, from *net.TCPAddr) {
	t.Helper()
	d := net.Dialer{LocalAddr: from}
	c, err := d.Dial("tcp", strings.TrimPrefix(s.api, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = fmt.Fprintf(c, "POST /plants HTTP/1.1\r\nHost: plantstore\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
		jwttest.New(t).Token(t, nil))
	require.NoError(t, err)
}

// expectRefused asks s's API for a plant on a new connection from the
// address from and expects the 503 50301 whose message begins with message.
func expectRefused(t *testing.T, s *service, from *net.TCPAddr, message string) {
	t.Helper()
	d := net.Dialer{LocalAddr: from}
	c, err := d.Dial("tcp", strings.TrimPrefix(s.api, "http://"))
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = io.WriteString(c, "GET /plants/1 HTTP/1.1\r\nHost: plantstore\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	req, err := http.NewRequest(http.MethodGet, s.api+"/plants/1", nil)
	require.NoError(t, err)
	s.contract.Check(t, req, resp, body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(string(body), `{"error":50301,"message":"`+message) {
		t.Fatalf("from %v: %d %s, want 503 50301 %q", from.IP, resp.StatusCode, body, message)
	}
}

// holdSilent opens a connection to base that sends nothing, closed when the
// test ends.
func holdSilent(t *testing.T, base string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
}

// refusedAt writes raw on a new connection to base, the admin listener,
// and reads the answer, until that answer is a 503: the listener counts a
// connection once it takes it, so until the held ones are all taken a new
// one may still be served.
func refusedAt(t *testing.T, base, raw string) (*http.Response, []byte) {
	t.Helper()
	var resp *http.Response
	var body []byte
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			return false
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, raw); err != nil {
			return false
		}
		if resp, err = http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			return false
		}
		body, _ = io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusServiceUnavailable
	}, time.Minute, 10*time.Millisecond, "never refused")
	return resp, body
}

// The process at the default limit, as the Kubernetes manifest runs it
// (GOMEMLIMIT 3/4 of its 128 MiB): with every connection busy reading a body
// at the limit and thousands more trying to connect, its peak resident
// memory stays under the manifest's limit. The figures it logs are those of
// docs/operations.md, "Admission"; MEMORY_TEST_CONNECTIONS measures another
// cap, which may fail.
func TestMemoryAtTheConnectionLimitStaysUnderTheManifestLimit(t *testing.T) {
	if bi, ok := debug.ReadBuildInfo(); ok && slices.Contains(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"}) {
		t.Skip("measures the service's memory, which the race detector multiplies; run without -race")
	}
	const (
		manifestLimit = 128 << 20
		bodyBytes     = httpapi.DefaultMaxBodyBytes
		headerBytes   = 16384 + 4096 // PLANTSTORE_MAX_HEADER_BYTES's default, and the 4 KiB net/http adds
		turnedAway    = 2000
	)
	conns := httpapi.DefaultMaxConnections
	if v, ok := os.LookupEnv("MEMORY_TEST_CONNECTIONS"); ok {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "MEMORY_TEST_CONNECTIONS")
		conns = n
	}
	p := startProcess(t, storeURLs()["sqlite"](t), map[string]string{
		"GOMEMLIMIT":                 "96MiB",
		"PLANTSTORE_MAX_CONNECTIONS": strconv.Itoa(conns),
		// Every connection comes from one address: it may hold them all.
		"PLANTSTORE_MAX_CONNECTIONS_PER_CLIENT": strconv.Itoa(conns),
	})
	addr := strings.TrimPrefix(p.api, "http://")
	token := jwttest.New(t).Token(t, nil)

	// Every connection sends a create whose headers are at their limit
	// and whose body is at its limit but for its last byte, so that its
	// handler holds all of it.
	busy := make([]net.Conn, conns)
	var wg sync.WaitGroup
	for i := range busy {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		busy[i] = c
		wg.Go(func() {
			start := fmt.Sprintf(`{"id":%d,"name":"busy"`, i+1)
			body := start + strings.Repeat(" ", bodyBytes-len(start)-1)
			head := fmt.Sprintf("POST /plants HTTP/1.1\r\nHost: plantstore\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\n", token, len(body)+1)
			padding := strings.Repeat("p", headerBytes-len(head)-len("X-Padding: \r\n\r\n"))
			_, err := fmt.Fprintf(c, "%sX-Padding: %s\r\n\r\n%s", head, padding, body)
			if err != nil {
				t.Errorf("send: %v", err)
			}
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool {
		_, metrics := adminGet(p.admin, "/metrics")
		return openConnections(metrics) == conns
	}, time.Minute, 50*time.Millisecond)
	for range turnedAway {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
	}
	busyRSS, busyPeak := residentMemory(t, p)

	// Every body ends at once, and every create is answered.
	for i, c := range busy {
		wg.Go(func() {
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(c, "}"); err != nil {
				t.Errorf("connection %d: %v", i, err)
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Errorf("connection %d: no answer: %v", i, err)
				return
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("connection %d answered %d", i, resp.StatusCode)
			}
		})
	}
	wg.Wait()
	_, peak := residentMemory(t, p)
	t.Logf("%d connections busy with %d-byte headers and %d-byte bodies and %d more connecting: resident %d MiB, peak %d MiB; after every create was answered, peak %d MiB",
		conns, headerBytes, bodyBytes, turnedAway, busyRSS>>20, busyPeak>>20, peak>>20)
	if peak >= manifestLimit {
		t.Errorf("peak resident memory %d MiB, at or over the manifest's limit of %d MiB", peak>>20, manifestLimit>>20)
	}
}

// openConnections is the API listener's open connections, as metrics, the
// admin listener's answer, says; -1 when it does not.
func openConnections(metrics string) int {
	for line := range strings.SplitSeq(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, "plantstore_http_open_connections "); ok {
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				return int(n)
			}
		}
	}
	return -1
}

// residentMemory is the process's resident memory now and at its peak, in
// bytes, from /proc; the test is skipped where there is none.
func residentMemory(t *testing.T, p *process) (now, peak int64) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc to read the process's memory from: %v", err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		name, value, _ := strings.Cut(line, ":")
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(value), "%d kB", &kb); err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			now = kb << 10
		case "VmHWM":
			peak = kb << 10
		}
	}
	return now, peak
}
