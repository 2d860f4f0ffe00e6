package main

import (
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// drainedCreate is one create of the drain test: when it was sent and what came
// back.
type drainedCreate struct {
	sent, done time.Time
	answer
}

// kind sorts a failed drainedCreate: refused (no connection), reset, or cut
// (the connection closed without an answer).
func (e drainedCreate) kind() string {
	switch {
	case e.err == nil:
		return ""
	case errors.Is(e.err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(e.err, syscall.ECONNRESET):
		return "reset"
	}
	return "cut"
}

// On SIGTERM with a shutdown delay, readiness fails at once, and the API
// answers every request for the whole delay, each answer asking the client
// to close its connection. Then it stops accepting: clients meet refused
// connections, except at the instant the listener closes, when a connection
// the kernel had accepted for it may be reset. Both kinds of clients are
// tested: keep-alive ones and ones that open a connection per request.
func TestSIGTERMDelayAnswersEveryRequestThenRefuses(t *testing.T) {
	const delay = 1500 * time.Millisecond
	for _, keepAlive := range []bool{true, false} {
		name := map[bool]string{true: "keep-alive", false: "new connection per request"}[keepAlive]
		t.Run(name, func(t *testing.T) {
			p := startProcess(t, "sqlite:"+filepath.Join(t.TempDir(), "plants.db"), map[string]string{
				"PLANTSTORE_SHUTDOWN_DELAY":   delay.String(),
				"PLANTSTORE_SHUTDOWN_TIMEOUT": "5s",
			})
			c := newCreator(t, p, 8)
			c.client.Timeout = 10 * time.Second
			c.client.Transport = &http.Transport{MaxIdleConnsPerHost: 8, DisableKeepAlives: !keepAlive, DisableCompression: true}

			var (
				mu        sync.Mutex
				exchanges []drainedCreate
				next      atomic.Int64
				acked     atomic.Int64 // creates answered 200
				lastSent  atomic.Int64 // a client stops once it has sent after this (Unix ns)
				wg        sync.WaitGroup
			)
			for range 8 {
				wg.Go(func() {
					for {
						e := drainedCreate{sent: time.Now()}
						e.answer = c.post(plantFor(next.Add(1)), "")
						e.done = time.Now()
						mu.Lock()
						exchanges = append(exchanges, e)
						mu.Unlock()
						if last := lastSent.Load(); last != 0 && e.sent.UnixNano() > last {
							return // this client has met the closed port
						}
						if e.err != nil {
							time.Sleep(5 * time.Millisecond) // a refused client backs off a little
						} else if e.status == http.StatusOK {
							acked.Add(1)
						}
					}
				})
			}
			require.Eventually(t, func() bool { return acked.Load() >= 100 }, time.Minute, 5*time.Millisecond,
				"the service acknowledges creates before SIGTERM")
			p.signal(t, syscall.SIGTERM)
			signalled := p.signalled
			// Readiness fails at once.
			require.Eventually(t, func() bool { status, _ := adminGet(p.admin, "/readyz"); return status == http.StatusServiceUnavailable },
				delay, 10*time.Millisecond, "readiness fails during the delay")
			if took := time.Since(signalled); took > 500*time.Millisecond {
				t.Errorf("readiness failed %s after SIGTERM", took)
			}
			p.waitExit(t, delay+10*time.Second)
			closing := signalled.Add(delay) // about when the listener closes
			// Every client meets the closed port.
			lastSent.Store(closing.Add(200 * time.Millisecond).UnixNano())
			wg.Wait()

			counts := map[string]int{}
			atInstant := map[string]int{}
			for _, e := range exchanges {
				switch {
				case e.done.Before(signalled):
					if e.err != nil || e.status != http.StatusOK {
						t.Errorf("before SIGTERM: %d %v", e.status, e.err)
					}
				case e.sent.Before(closing.Add(-100 * time.Millisecond)):
					// Sent during the delay: answered, and told to reconnect.
					counts["during the delay"]++
					if e.err != nil || e.status != http.StatusOK {
						t.Errorf("during the delay (sent %s after SIGTERM): %d %v", e.sent.Sub(signalled), e.status, e.err)
					} else if !e.closed && e.sent.After(signalled.Add(50*time.Millisecond)) {
						t.Errorf("an answer during the delay kept the connection open")
					}
				case e.sent.Before(closing.Add(200 * time.Millisecond)):
					// The instant the listener closes: an answer, or any failure.
					atInstant[e.kind()]++
					if e.err == nil && e.status != http.StatusOK {
						t.Errorf("at the close: %d", e.status)
					}
				default:
					counts["after: "+e.kind()]++
					if e.kind() != "refused" {
						t.Errorf("after the delay (sent %s after SIGTERM): %d %v; want a refused connection",
							e.sent.Sub(signalled), e.status, e.err)
					}
				}
			}
			if counts["during the delay"] == 0 {
				t.Fatal("no request was sent during the delay")
			}
			// The instant is measured, not asserted: see docs/operations.md.
			t.Logf("%s: %v; at the instant the listener closed: %v", name, counts, atInstant)
		})
	}
}
