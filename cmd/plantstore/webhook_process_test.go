package main

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// plantsDelivered counts the deliveries a receiver got per plant id, and
// how many events came more than once.
func plantsDelivered(t *testing.T, r *hookReceiver) (perPlant map[int64]int, repeated int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	perPlant = map[int64]int{}
	seen := map[string]bool{}
	for _, d := range r.got {
		var p struct{ ID int64 }
		if err := json.Unmarshal([]byte(d.body), &p); err != nil {
			t.Fatal(err)
		}
		perPlant[p.ID]++
		if seen[d.id] {
			repeated++
		}
		seen[d.id] = true
	}
	return perPlant, repeated
}

// waitDelivered waits until every plant in ids was delivered at least once.
func waitDelivered(t *testing.T, r *hookReceiver, ids []int64, within time.Duration) (repeated int) {
	t.Helper()
	missing := func() (n int) {
		got, _ := plantsDelivered(t, r)
		for _, id := range ids {
			if got[id] == 0 {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return missing() == 0 }, within, 50*time.Millisecond, "acknowledged plants never announced")
	_, repeated = plantsDelivered(t, r)
	return repeated
}

// A SIGKILL right after acknowledged creates loses no event: the restarted
// service announces every acknowledged plant.
func TestWebhookEventsSurviveSIGKILL(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		file, secret := newSecretFile(t)
		answer, bringUp := downUntilUp(503, 204)
		r := newHookReceiver(t, secret, answer)
		env := webhookEnv(file, r.srv.URL)
		// Claims last twice the attempt timeout: the claims the killed
		// process held end 4s after they were taken.
		env["PLANTSTORE_WEBHOOK_TIMEOUT"] = "2s"
		p := startProcess(t, db, env)
		c := newCreator(t, p, 8)
		var acked []int64
		for id := int64(1); id <= 40; id++ {
			if a := c.post(plantFor(id), ""); a.status == 200 {
				acked = append(acked, id)
			}
		}
		p.signal(t, syscall.SIGKILL)
		if state := p.waitExit(t, 10*time.Second); !killedBy(state, syscall.SIGKILL) {
			t.Fatalf("the service exited with %v, want SIGKILL", state)
		}
		bringUp()
		startProcess(t, db, env)
		waitDelivered(t, r, acked, 30*time.Second)
	})
}

// Two replicas on one PostgreSQL database share the deliveries: every event
// is delivered, and in normal operation none twice.
func TestTwoReplicasShareTheDeliveries(t *testing.T) {
	db := pgtest.NewDatabase(t)
	file, secret := newSecretFile(t)
	r := newHookReceiver(t, secret, nil)
	env := webhookEnv(file, r.srv.URL)
	a, b := startProcess(t, db, env), startProcess(t, db, env)
	ca, cb := newCreator(t, a, 4), newCreator(t, b, 4)
	var (
		mu    sync.Mutex
		acked []int64
		wg    sync.WaitGroup
	)
	for w := range 8 {
		wg.Go(func() {
			c := []*creator{ca, cb}[w%2]
			for i := range 25 {
				id := int64(w*1000 + i)
				if c.post(plantFor(id), "").status == 200 {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if repeated := waitDelivered(t, r, acked, 30*time.Second); repeated != 0 {
		t.Errorf("%d events delivered more than once by two replicas in normal operation", repeated)
	}
	// Both took part.
	var byReplica []float64
	for _, p := range []*process{a, b} {
		resp, err := http.Get(p.admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		byReplica = append(byReplica, metricValue(t, string(body), `plantstore_webhook_attempts_total{outcome="delivered"}`))
	}
	if byReplica[0] == 0 || byReplica[1] == 0 {
		t.Errorf("deliveries by replica: %v; want both to share them", byReplica)
	}
	t.Logf("%d plants announced once each by two replicas (%v each)", len(acked), byReplica)
}

// A replica killed while its attempts hang leaves its claims behind; once
// their lease ends, the other replica takes them over and delivers every
// acknowledged event.
func TestAKilledReplicasClaimsAreTakenOver(t *testing.T) {
	db := pgtest.NewDatabase(t)
	file, secret := newSecretFile(t)
	r := newHoldingReceiver(t, secret)
	env := webhookEnv(file, r.srv.URL)
	// Claims last twice the attempt timeout: 4s.
	env["PLANTSTORE_WEBHOOK_TIMEOUT"] = "2s"
	a := startProcess(t, db, env)
	startProcess(t, db, env) // the replica that takes over
	c := newCreator(t, a, 8)
	var acked []int64
	for id := int64(1); id <= 40; id++ {
		if c.post(plantFor(id), "").status == 200 {
			acked = append(acked, id)
		}
	}
	// Each replica has 16 attempt slots: 17 hanging attempts mean both
	// hold claims.
	require.Eventually(t, func() bool { return r.hanging() >= 17 }, 10*time.Second, 10*time.Millisecond, "want both replicas holding claims")
	a.signal(t, syscall.SIGKILL)
	if state := a.waitExit(t, 10*time.Second); !killedBy(state, syscall.SIGKILL) {
		t.Fatalf("the replica exited with %v, want SIGKILL", state)
	}
	// The receiver drops the killed replica's attempts: none of them counts
	// as a delivery.
	require.Eventually(t, func() bool { return r.hanging() <= 16 }, 5*time.Second, 10*time.Millisecond, "the killed replica's attempts should have ended")
	r.release()
	repeated := waitDelivered(t, r.hookReceiver, acked, 30*time.Second)
	t.Logf("%d events delivered after one of two replicas was killed holding claims; %d more than once", len(acked), repeated)
}

// holdingReceiver is a receiver whose attempts hang until let through or
// released; an attempt whose sender went away meanwhile is not counted as a
// delivery.
type holdingReceiver struct {
	*hookReceiver
	waiting atomic.Int64
	pass    chan struct{} // each token lets one waiting attempt through
	held    chan struct{} // closed by release
	once    sync.Once
}

func newHoldingReceiver(t *testing.T, secret string) *holdingReceiver {
	t.Helper()
	h := &holdingReceiver{hookReceiver: newHookReceiver(t, secret, nil), pass: make(chan struct{}, 64), held: make(chan struct{})}
	h.srv.Close()
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Only once the body is read does net/http watch the connection
		// and end the request's context when the sender goes away.
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		h.waiting.Add(1)
		select {
		case <-h.pass:
		case <-h.held:
		case <-req.Context().Done():
		}
		h.waiting.Add(-1)
		if req.Context().Err() != nil {
			return
		}
		h.serve(w, req)
	}))
	t.Cleanup(h.srv.Close)
	t.Cleanup(h.release)
	return h
}

// hanging is how many attempts wait now.
func (h *holdingReceiver) hanging() int { return int(h.waiting.Load()) }

// let lets n waiting or coming attempts through.
func (h *holdingReceiver) let(n int) {
	for range n {
		h.pass <- struct{}{}
	}
}

// release lets every attempt through, now and from now on.
func (h *holdingReceiver) release() { h.once.Do(func() { close(h.held) }) }

// SIGTERM while deliveries are in flight loses nothing, however long a
// receiver may take to answer: attempts answered within the grace period
// finish, those still hanging at its end are cut short, the service exits
// 0, and what was not delivered before the stop is delivered after the
// restart.
func TestSIGTERMMidDeliveryLosesNothing(t *testing.T) {
	for name, answered := range map[string]bool{"answered in the grace period": true, "hanging past it": false} {
		t.Run(name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, db string) {
				file, secret := newSecretFile(t)
				r := newHoldingReceiver(t, secret)
				env := webhookEnv(file, r.srv.URL)
				maps.Copy(env, map[string]string{"PLANTSTORE_WEBHOOK_CONCURRENCY": "2", "PLANTSTORE_WEBHOOK_TIMEOUT": "60s", "PLANTSTORE_SHUTDOWN_TIMEOUT": "1s"})
				p := startProcess(t, db, env)
				c := newCreator(t, p, 4)
				var acked []int64
				for id := int64(1); id <= 30; id++ {
					if c.post(plantFor(id), "").status == 200 {
						acked = append(acked, id)
					}
				}
				require.Eventually(t, func() bool { return r.hanging() == 2 }, 10*time.Second, 10*time.Millisecond, "want both slots in flight")
				p.signal(t, syscall.SIGTERM)
				delivered := 0
				if answered { // the attempts in flight, and no later one
					delivered = 2
					r.let(delivered)
				}
				// The attempts would run for a minute; the grace period is a second.
				if state := p.waitExit(t, 8*time.Second); state.ExitCode() != 0 {
					t.Fatalf("exit %v\n%s", state, p.output())
				}
				if got, _ := plantsDelivered(t, r.hookReceiver); len(got) != delivered {
					t.Fatalf("%d of %d events delivered before the stop; want %d", len(got), len(acked), delivered)
				}
				r.release()
				startProcess(t, db, env)
				waitDelivered(t, r.hookReceiver, acked, 30*time.Second)
			})
		})
	}
}
