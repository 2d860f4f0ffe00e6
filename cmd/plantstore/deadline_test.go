package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/postgres/pgproxy"
	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// deadlineLoad sends creates, reads, changes, lists and deletes through the
// service and keeps how they were answered.
type deadlineLoad struct {
	s     *service
	token string

	mu       sync.Mutex
	slowest  time.Duration
	wrong    []string // answers the contract does not allow here
	ok, shed atomic.Int64
	lastOK   atomic.Int64 // unix nanoseconds of the latest 2xx
}

// send sends one request and records its answer: a 2xx, a 404 for a plant
// whose write was answered 503 (its outcome is unknown), or a 503 50301
// with Retry-After; nothing else, and never later than the deadline plus a
// second.
func (l *deadlineLoad) send(t *testing.T, method, path, contentType, body string) int {
	req, err := http.NewRequest(method, l.s.api+path, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	start := time.Now()
	a := exchange(t, l.s.client, l.s.contract, req)
	took := time.Since(start)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.slowest = max(l.slowest, took)
	switch {
	case a.err == nil && a.status/100 == 2:
		l.ok.Add(1)
		l.lastOK.Store(time.Now().UnixNano())
	case a.unavailable():
		l.shed.Add(1)
	case a.err == nil && a.status == http.StatusNotFound && strings.HasPrefix(a.body, `{"error":40402,`):
	default:
		l.wrong = append(l.wrong, fmt.Sprintf("%s %s: %s", method, path, a))
	}
	return a.status
}

// cycle creates plant id, reads it, renames it, lists around it and
// deletes it.
func (l *deadlineLoad) cycle(t *testing.T, id int) {
	path := fmt.Sprintf("/plants/%d", id)
	if l.send(t, http.MethodPost, "/plants", "application/json", fmt.Sprintf(`{"id":%d,"name":"Fern"}`, id)) != http.StatusOK {
		return
	}
	l.send(t, http.MethodGet, path, "", "")
	l.send(t, http.MethodPatch, path, "application/merge-patch+json", `{"name":"Fern renamed"}`)
	l.send(t, http.MethodGet, fmt.Sprintf("/plants?limit=5&after=%d", id-3), "", "")
	l.send(t, http.MethodDelete, path, "", "")
}

// The link between the service and PostgreSQL stalls (packets dropped,
// connections kept, logins never completing), then answers later than the
// deadline, then resets every connection again and again. Throughout,
// every request is answered, and no later than PLANTSTORE_DB_QUERY_TIMEOUT
// plus a second: a 2xx, or a 503 50301 with Retry-After; readiness answers
// within a second; and after each heal the service answers 2xx again on its
// own.
func TestEveryRequestIsAnsweredWithinItsDeadlineWhateverTheLinkDoes(t *testing.T) {
	const deadline = time.Second
	direct := pgtest.NewDatabase(t)
	proxy, proxied := pgproxy.Start(t, direct)
	s := startService(t, proxied, map[string]string{"PLANTSTORE_DB_QUERY_TIMEOUT": deadline.String()})
	l := &deadlineLoad{s: s, token: s.token(t, nil)}

	stop := make(chan struct{})
	var clients sync.WaitGroup
	const workers = 8
	for w := range workers {
		clients.Go(func() {
			for id := w + 1; ; id += workers {
				select {
				case <-stop:
					return
				default:
					l.cycle(t, id)
				}
			}
		})
	}
	stopClients := sync.OnceFunc(func() { close(stop); clients.Wait() })
	defer stopClients()

	waitUntil(t, func() bool { return l.ok.Load() >= 50 }, "no request answered 2xx before the faults")
	resets := func() (heal func()) {
		done, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			for {
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
					proxy.Reset()
				}
			}
		}()
		return func() { close(done); <-stopped }
	}
	for _, fault := range []struct {
		name  string
		start func() (heal func())
	}{
		{"stall", func() func() { proxy.Stall(); return proxy.Heal }},
		{"latency past the deadline", func() func() { proxy.Delay(3 * deadline / 2); return proxy.Heal }},
		{"resets", resets},
	} {
		shedBefore := l.shed.Load()
		heal := fault.start()
		slowestReady := probeReadiness(t, s, 3*deadline)
		heal()
		healed := time.Now()
		waitUntil(t, func() bool { return l.lastOK.Load() > healed.UnixNano() }, fault.name+": no 2xx after the heal")
		t.Logf("%s: %d answered 503; slowest readiness probe %s; first 2xx %s after the heal", fault.name,
			l.shed.Load()-shedBefore, slowestReady.Round(time.Millisecond), time.Unix(0, l.lastOK.Load()).Sub(healed).Round(time.Millisecond))
		if l.shed.Load() == shedBefore {
			t.Errorf("%s: no request answered 503", fault.name)
		}
	}
	stopClients()

	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.wrong {
		t.Errorf("an answer the contract does not allow: %s", w)
	}
	if l.slowest > deadline+time.Second {
		t.Errorf("the slowest answer took %s; want every one within the deadline (%s) plus a second", l.slowest.Round(time.Millisecond), deadline)
	}
	t.Logf("%d answered 2xx, %d answered 503; slowest answer %s", l.ok.Load(), l.shed.Load(), l.slowest.Round(time.Millisecond))
}

// probeReadiness asks /readyz again and again for d, failing t when a
// probe is not answered within its second (and half a second for a loaded
// machine), and returns the slowest.
func probeReadiness(t *testing.T, s *service, d time.Duration) (slowest time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); {
		req, err := http.NewRequest(http.MethodGet, s.admin+"/readyz", nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		a := exchange(t, s.client, nil, req)
		took := time.Since(start)
		slowest = max(slowest, took)
		if a.err != nil || (a.status != http.StatusOK && a.status != http.StatusServiceUnavailable) {
			t.Errorf("readiness: %s", a)
		}
		if took > 1500*time.Millisecond {
			t.Errorf("a readiness probe took %s; want an answer within a second", took.Round(time.Millisecond))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return slowest
}

func waitUntil(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for end := time.Now().Add(15 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatal(msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
