//go:build linux

package httpapi

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// floodClients is how many connections the flood test opens of each kind,
// ten times the default cap.
const floodClients = 5000

// Budgets of the flood test's bounds on the heap, about twice what was
// measured: a server connection idle between requests holds its buffers and
// state (about 9 KB), a client one held by the test its descriptor (under
// 500 bytes), and every answer adds an access line to the test's log (about
// 300 bytes). With the default cap the heap grew by 9 MB for the 5,000 idle
// keep-alive clients, a bound of 27 MB; without a cap, by 53 MB.
const (
	serverConnBudget = 16 << 10
	clientConnBudget = 2 << 10
	logLineBudget    = 1 << 10
	heapSlack        = 4 << 20
)

// usage is what a flood may grow: goroutines, live heap, open files.
type usage struct {
	goroutines int
	heap       uint64
	files      int
}

func measureUsage(t *testing.T) usage {
	t.Helper()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return usage{goroutines: runtime.NumGoroutine(), heap: m.HeapAlloc, files: len(fds)}
}

// requireFiles raises the limit on open files to n, or skips the test.
func requireFiles(t *testing.T, n uint64) {
	t.Helper()
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Skipf("the limit on open files cannot be read: %v", err)
	}
	if r.Cur < n && r.Max >= n {
		r.Cur = n
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r)
	}
	if r.Cur < n {
		t.Skipf("needs %d open files; RLIMIT_NOFILE allows %d (hard %d)", n, r.Cur, r.Max)
	}
}

// Ten times the default cap of clients that open a connection and keep it
// idle after one request, then silent ones that never send a request, cost
// the server no more than the cap: open connections, goroutines, files and
// heap stay within bounds derived from it, a new client is still served,
// and every silent client beyond the cap is answered 503.
func TestAFloodOfIdleClientsStaysWithinTheConnectionLimit(t *testing.T) {
	requireFiles(t, 2*floodClients+DefaultMaxConnections+512)
	s := startServer(t)
	addr := strings.TrimPrefix(s.url, "http://")
	read := readPlant("Bearer " + s.token(t, nil))
	base := measureUsage(t)

	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			_ = c.Close()
		}
	})
	hold := func(c net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		held = append(held, c)
	}
	within := func(kind string, lines int) {
		t.Helper()
		u := measureUsage(t)
		capped := DefaultMaxConnections + refusalsInFlight
		t.Logf("%s: %d connections held, %d open on the server; goroutines +%d, files +%d, heap +%d KB",
			kind, len(held), s.conns.openCount(), u.goroutines-base.goroutines, u.files-base.files, (int64(u.heap)-int64(base.heap))>>10)
		if open := s.conns.openCount(); open > DefaultMaxConnections {
			t.Errorf("%s: %d connections open, over the cap of %d", kind, open, DefaultMaxConnections)
		}
		if grew := u.goroutines - base.goroutines; grew > capped+32 {
			t.Errorf("%s: %d goroutines more, over the cap's %d and 32", kind, grew, capped)
		}
		if grew := u.files - base.files; grew > len(held)+capped+32 {
			t.Errorf("%s: %d files more for the %d the clients hold, over the cap's %d and 32", kind, grew, len(held), capped)
		}
		bound := uint64(DefaultMaxConnections*serverConnBudget + len(held)*clientConnBudget + lines*logLineBudget + heapSlack)
		if u.heap > base.heap && u.heap-base.heap > bound {
			t.Errorf("%s: heap %d KB more, over a bound of %d KB", kind, (u.heap-base.heap)>>10, bound>>10)
		}
	}

	// Keep-alive clients, each idle after one request.
	const workers = 16
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < floodClients; i += workers {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Errorf("dial: %v", err)
					return
				}
				hold(c)
				_ = c.SetDeadline(time.Now().Add(closeBound))
				if _, err := io.WriteString(c, read); err != nil {
					t.Errorf("write: %v", err)
					return
				}
				resp, err := http.ReadResponse(bufio.NewReaderSize(c, 1024), nil)
				if err != nil {
					t.Errorf("client %d: no answer: %v", i, err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				req, _ := http.NewRequest(http.MethodGet, s.url+"/plants/1", nil)
				s.contract.Check(t, req, resp, body)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	awaitIdle(t, s, DefaultMaxConnections)
	within("idle keep-alive clients", floodClients)
	s.call(t, http.MethodGet, "/plants/1").expectError(t, 404, "40402")

	// Silent clients, which never send a request and never close. Each
	// takes the place of an idle one, or, once the cap holds silent ones
	// that have waited waitingGrace, of the one that waited the longest;
	// with none to give way it is refused, refusalsInFlight at a time (each
	// refusal lingers for its client to close), the rest waiting in the
	// kernel's listen queue for their turn. How many end each way depends
	// on how fast the machine is; that each ends one way, and that the
	// counts agree, does not.
	awaitIdle(t, s, DefaultMaxConnections)
	const silentClients = DefaultMaxConnections + 4*refusalsInFlight
	before := map[string]float64{}
	for _, action := range []string{"refused", "closed_idle", "closed_no_request"} {
		before[action] = shed(t, s.metrics, action)
	}
	since := func(action string) int { return int(shed(t, s.metrics, action) - before[action]) }
	silent := make([]net.Conn, silentClients)
	for i := range silent {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		hold(c)
		silent[i] = c
	}
	// Every silent connection has been admitted in the place of another,
	// or refused, and no refusal is still being sent.
	settled := func() bool {
		return since("refused")+since("closed_idle")+since("closed_no_request") == silentClients && len(s.conns.refusing) == 0
	}
	require.Eventually(t, settled, settleBound, 10*time.Millisecond,
		"of %d silent connections, %d refused, %d admitted in the place of an idle one, %d in the place of a silent one",
		silentClients, since("refused"), since("closed_idle"), since("closed_no_request"))
	within("silent clients", floodClients+silentClients)

	// What each silent connection got: a 503, a close with nothing (made
	// room for a later one), or nothing yet (still admitted). Every answer
	// is in its socket already: the counts above are taken after them.
	const (
		stillOpen = iota
		refused
		closed
	)
	ended := make([]int, len(silent))
	for i, c := range silent {
		switch socketHolds(t, c) {
		case socketEmpty:
			ended[i] = stillOpen
			continue
		case socketClosed:
			ended[i] = closed
			continue
		}
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(closeBound))
			resp, err := http.ReadResponse(bufio.NewReaderSize(c, 1024), nil)
			if err != nil {
				t.Errorf("silent connection %d: part of an answer: %v", i, err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			req, _ := http.NewRequest(http.MethodGet, s.url+"/plants/1", nil) // whatever it would have asked
			s.contract.Check(t, req, resp, body)
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "50301") {
				t.Errorf("silent connection %d: %d %s, want 503 50301", i, resp.StatusCode, body)
			}
			ended[i] = refused
		})
	}
	wg.Wait()
	if n := count(ended, refused); n != since("refused") {
		t.Errorf("%d silent connections answered 503 50301, and %d counted refused", n, since("refused"))
	}
	if n := count(ended, closed); n != since("closed_no_request") {
		t.Errorf("%d silent connections closed unanswered, and %d counted closed to make room", n, since("closed_no_request"))
	}
	// Each admitted either in the place of an idle one or of a silent one,
	// which then is closed.
	if n := count(ended, stillOpen); n != since("closed_idle") {
		t.Errorf("%d silent connections still open, and %d admitted in the place of an idle one", n, since("closed_idle"))
	}

	// A new client is served still: the silent connections that have
	// waited waitingGrace give way to it.
	require.Eventually(t, func() bool {
		e, err := s.tryExchange(read)
		if e.conn != nil {
			hold(e.conn)
		}
		return err == nil && e.resp.StatusCode == http.StatusNotFound
	}, settleBound, 10*time.Millisecond, "a new client is never served beside the silent ones")
}

// settleBound is how long a test waits for a flood to be dealt with: every
// connection admitted or refused, about a second a refusalsInFlight of
// them on a 2-core machine under load.
const settleBound = time.Minute

// count is how many of vs are v.
func count[T comparable](vs []T, v T) int {
	n := 0
	for _, x := range vs {
		if x == v {
			n++
		}
	}
	return n
}
