package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
	"github.com/plantstore/plantstore/adapters/postgres/pgproxy"
	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// The link to PostgreSQL stalls while three times as many clients as the
// connection limit send creates as fast as they are answered. The service's
// goroutines stay bounded by its connection limit, not by its clients or by
// how long the stall lasts; every request it reads is answered within the
// deadline plus a second, 2xx or 503 50301 with Retry-After; and once the
// link heals, creates succeed again.
func TestAStallUnderLoadKeepsTheServiceBounded(t *testing.T) {
	const (
		maxConns = 100
		clients  = 3 * maxConns
		deadline = time.Second
	)
	direct := pgtest.NewDatabase(t)
	proxy, proxied := pgproxy.Start(t, direct)
	p := startProcess(t, proxied, map[string]string{
		"PLANTSTORE_MAX_CONNECTIONS": strconv.Itoa(maxConns),
		// Every client comes from one address: it may hold the whole cap.
		"PLANTSTORE_MAX_CONNECTIONS_PER_CLIENT": strconv.Itoa(maxConns),
		"PLANTSTORE_DB_QUERY_TIMEOUT":           deadline.String(),
	})
	addr := strings.TrimPrefix(p.api, "http://")
	token := jwttest.New(t).Token(t, nil)

	var (
		stop          = make(chan struct{})
		wg            sync.WaitGroup
		ok, shed, ids atomic.Int64
		lastOK        atomic.Int64
		mu            sync.Mutex
		slowest       time.Duration
		wrong         []string
	)
	for range clients {
		wg.Go(func() {
			var c net.Conn
			var r *bufio.Reader
			defer func() {
				if c != nil {
					_ = c.Close()
				}
			}()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if c == nil {
					var err error
					if c, err = net.DialTimeout("tcp", addr, 5*time.Second); err != nil {
						time.Sleep(10 * time.Millisecond)
						continue
					}
					r = bufio.NewReader(c)
				}
				body := fmt.Sprintf(`{"id":%d,"name":"Fern"}`, ids.Add(1))
				start := time.Now()
				_ = c.SetDeadline(start.Add(30 * time.Second))
				_, err := fmt.Fprintf(c, "POST /plants HTTP/1.1\r\nHost: plantstore\r\nAuthorization: Bearer %s\r\n"+
					"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", token, len(body), body)
				var resp *http.Response
				if err == nil {
					resp, err = http.ReadResponse(r, nil)
				}
				if err != nil {
					// Closed at the limit before the request was read, or
					// closed while idle to make room: connect again.
					_ = c.Close()
					c = nil
					time.Sleep(10 * time.Millisecond)
					continue
				}
				answer, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				took := time.Since(start)
				mu.Lock()
				slowest = max(slowest, took)
				switch {
				case resp.StatusCode == http.StatusOK:
					ok.Add(1)
					lastOK.Store(time.Now().UnixNano())
				case resp.StatusCode == http.StatusServiceUnavailable && strings.HasPrefix(string(answer), `{"error":50301,`) &&
					resp.Header.Get("Retry-After") != "":
					shed.Add(1)
				default:
					wrong = append(wrong, fmt.Sprintf("%d %s", resp.StatusCode, answer))
				}
				mu.Unlock()
				if resp.Close {
					_ = c.Close()
					c = nil
				}
			}
		})
	}
	stopClients := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopClients()

	waitUntil(t, func() bool { return ok.Load() >= 200 }, "no create answered before the stall")
	proxy.Stall()
	stalled := time.Now()
	most := 0
	for time.Since(stalled) < 4*deadline {
		if n := goroutines(t, p); n > most {
			most = n
		}
		time.Sleep(50 * time.Millisecond) // the sampling interval of the peak
	}
	proxy.Heal()
	healed := time.Now()
	waitUntil(t, func() bool { return lastOK.Load() > healed.UnixNano() }, "no create answered 200 after the heal")
	stopClients()

	_, peak := residentMemory(t, p)
	t.Logf("%d clients, a limit of %d connections: %d answered 200, %d answered 503; at most %d goroutines during the stall; slowest answer %s; peak resident memory %d MiB",
		clients, maxConns, ok.Load(), shed.Load(), most, slowest.Round(time.Millisecond), peak>>20)
	// Each open connection holds its own goroutine and, while its request
	// is read, one more; refusals in progress and the service's own
	// background work (pool, batchers, listeners, metrics) are a few dozen.
	if bound := 2*maxConns + 64 + 100; most > bound {
		t.Errorf("%d goroutines during the stall; want them bounded by the connection limit, at most %d", most, bound)
	}
	if slowest > deadline+time.Second {
		t.Errorf("the slowest answer took %s; want every one within the deadline (%s) plus a second", slowest.Round(time.Millisecond), deadline)
	}
	for _, w := range wrong {
		t.Errorf("an answer the contract does not allow: %s", w)
	}
	if shed.Load() == 0 {
		t.Error("no request answered 503 during the stall")
	}
}

// goroutines is the service's go_goroutines, read from its metrics.
func goroutines(t *testing.T, p *process) int {
	t.Helper()
	_, metrics := adminGet(p.admin, "/metrics")
	for line := range strings.SplitSeq(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return int(n)
			}
		}
	}
	t.Fatal("no go_goroutines in the metrics")
	return 0
}
