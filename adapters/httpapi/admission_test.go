//go:build linux

package httpapi

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Admission beside hostile clients: a well-behaved client, from an address
// of its own, keeps being served while another address attacks the
// listener. The attacks are those a production front bounds (nginx's
// limit_conn and client_header_timeout, HAProxy's timeout http-request):
// slowloris, header floods and connection churn, alone and together.
//
// What the tests assert is what a loaded machine cannot change: how many of
// the good client's requests were answered 2xx, and how many connections,
// goroutines and bytes the server holds, bounded by its cap. The one bound
// on time, the good client's p99 within the request deadline, has the
// machine's slowness as its margin: the deadline is 5 s, and the p99 on a
// 2-core machine under -race with two CPU hogs beside it was 40 to 80 ms.

const (
	hostileCap      = 64
	hostileShare    = 16
	hostileDeadline = 5 * time.Second
	goodRequests    = 200
	goodWorkers     = 4
)

// The well-behaved client's address, and the attacker's (the default
// source address of a loopback dial).
var (
	goodAddr     = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}
	attackerAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
)

// attack runs against addr until ctx ends, from the address from. It calls
// begun once, when it is under way.
type attack func(ctx context.Context, addr string, from *net.TCPAddr, begun func())

func TestAWellBehavedClientIsServedBesideHostileOnes(t *testing.T) {
	for _, c := range []struct {
		name    string
		attacks []attack
	}{
		{"slowloris", []attack{slowloris}},
		{"header flood", []attack{headerFlood}},
		{"connection churn", []attack{connectionChurn}},
		{"all at once", []attack{slowloris, headerFlood, connectionChurn}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServer(t, withStore(seededStore(t)), withMaxConns(hostileCap), withClientShare(hostileShare),
				withRequestTimeout(hostileDeadline),
				withLimits(ServerLimits{ReadHeaderTimeout: 2 * time.Second, MaxHeaderBytes: 16 << 10, IdleTimeout: time.Minute}))
			addr := strings.TrimPrefix(s.url, "http://")
			base := measureUsage(t)

			ctx, stop := context.WithCancel(context.Background())
			var attackers, begun sync.WaitGroup
			for _, a := range c.attacks {
				begun.Add(1)
				attackers.Go(func() { a(ctx, addr, attackerAddr, sync.OnceFunc(begun.Done)) })
			}
			begun.Wait()

			latencies, failures := goodClient(t, s, goodAddr)
			peak := measureUsage(t)
			stop()
			attackers.Wait()

			slices.Sort(latencies)
			p99 := latencies[len(latencies)*99/100]
			t.Logf("%d of %d requests failed; p99 %v, longest %v; server: %d open, goroutines +%d, heap +%d KB",
				len(failures), goodRequests, p99, latencies[len(latencies)-1], s.conns.openCount(),
				peak.goroutines-base.goroutines, (int64(peak.heap)-int64(base.heap))>>10)
			if len(failures)*100 > goodRequests {
				t.Errorf("%d of %d requests of the well-behaved client failed, over 1 %%: %v", len(failures), goodRequests, failures[:min(len(failures), 5)])
			}
			if p99 > hostileDeadline {
				t.Errorf("the well-behaved client's p99 is %v, over the request deadline of %v", p99, hostileDeadline)
			}
			// The server holds at most its cap of counted connections, as
			// many closing, and its refusals in progress, each a
			// goroutine; the attackers' own sockets are the test's.
			serverGoroutines := 2*hostileCap + refusalsInFlight
			if grew := peak.goroutines - base.goroutines; grew > serverGoroutines+len(c.attacks)*attackConns+goodWorkers+64 {
				t.Errorf("%d goroutines more under the attack, over the server's %d, the attackers' and 64", grew, serverGoroutines)
			}
			bound := uint64(serverGoroutines*(serverConnBudget+16<<10+4<<10) + len(c.attacks)*attackConns*clientConnBudget + 4*heapSlack)
			if peak.heap > base.heap && peak.heap-base.heap > bound {
				t.Errorf("heap %d KB more under the attack, over a bound of %d KB", (peak.heap-base.heap)>>10, bound>>10)
			}
		})
	}
}

// goodClient reads plant 1 goodRequests times, goodWorkers at a time, as an
// HTTP client does (keep-alive connections, a new one when one is closed),
// from the address from. It returns every request's latency, and what went
// wrong with those that were not answered 200.
func goodClient(t *testing.T, s *testServer, from *net.TCPAddr) (latencies []time.Duration, failures []string) {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: from}
	hc := &http.Client{
		Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: goodWorkers},
		Timeout:   time.Minute,
	}
	defer hc.CloseIdleConnections()
	authorization := "Bearer " + s.token(t, nil)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var next atomic.Int32
	for range goodWorkers {
		wg.Go(func() {
			for next.Add(1) <= goodRequests {
				req, _ := http.NewRequest(http.MethodGet, s.url+"/plants/1", nil)
				req.Header.Set("Authorization", authorization)
				start := time.Now()
				resp, err := hc.Do(req)
				var failure string
				if err != nil {
					failure = err.Error()
				} else {
					body, _ := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					s.contract.Check(t, req, resp, body)
					if resp.StatusCode != http.StatusOK {
						failure = fmt.Sprintf("%d %s", resp.StatusCode, body)
					}
				}
				mu.Lock()
				latencies = append(latencies, time.Since(start))
				if failure != "" {
					failures = append(failures, failure)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return latencies, failures
}

// attackConns is how many sockets each attack keeps going at once.
const attackConns = 3 * hostileCap

// dialFrom opens a connection to addr from the address from, or returns nil
// when ctx has ended or the dial fails.
func dialFrom(ctx context.Context, addr string, from *net.TCPAddr) net.Conn {
	d := net.Dialer{LocalAddr: from}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil
	}
	return c
}

// slowloris keeps attackConns sockets open, each having sent the start of a
// request head and nothing more; it opens another as soon as the server
// closes one, more than the cap in all.
func slowloris(ctx context.Context, addr string, from *net.TCPAddr, begun func()) {
	var wg, sent sync.WaitGroup
	sent.Add(attackConns)
	go func() { sent.Wait(); begun() }()
	for range attackConns {
		wg.Go(func() {
			once := sync.OnceFunc(sent.Done)
			defer once()
			for ctx.Err() == nil {
				c := dialFrom(ctx, addr, from)
				if c == nil {
					continue
				}
				stop := context.AfterFunc(ctx, func() { _ = c.Close() })
				_, _ = io.WriteString(c, "GET /plants/1 HTTP/1.1\r\nHost: x\r\nX-Slow: a")
				once()
				_, _ = io.Copy(io.Discard, c) // until the server closes it
				stop()
				_ = c.Close()
			}
		})
	}
	wg.Wait()
}

// floodHeader is a request head far over the header limit, 1 MB of one
// header, written again and again: the server refuses it 400 once it has
// read past its limit.
var floodHeader = "GET /plants/1 HTTP/1.1\r\nHost: x\r\nX-Flood: " + strings.Repeat("f", 1<<20) + "\r\n\r\n"

// headerFlood sends floodHeader on new connections, a few at a time, as
// fast as they are refused.
func headerFlood(ctx context.Context, addr string, from *net.TCPAddr, begun func()) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				c := dialFrom(ctx, addr, from)
				if c == nil {
					continue
				}
				_ = c.SetDeadline(time.Now().Add(closeBound))
				_, _ = io.WriteString(c, floodHeader)
				_, _ = io.Copy(io.Discard, c)
				_ = c.Close()
				begun()
			}
		})
	}
	wg.Wait()
}

// connectionChurn opens connections and closes them at once, some having
// sent nothing, some having sent a request without a token (refused 401),
// as fast as it can.
func connectionChurn(ctx context.Context, addr string, from *net.TCPAddr, begun func()) {
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				c := dialFrom(ctx, addr, from)
				if c == nil {
					continue
				}
				if (w+i)%2 == 0 {
					_ = c.SetDeadline(time.Now().Add(closeBound))
					_, _ = io.WriteString(c, "GET /plants/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
					_, _ = io.Copy(io.Discard, c)
				}
				_ = c.Close()
				begun()
			}
		})
	}
	wg.Wait()
}
