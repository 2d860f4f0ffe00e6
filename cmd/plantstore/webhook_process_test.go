package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
	"github.com/plantstore/plantstore/adapters/postgres/pgproxy"
	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/adapters/webhook/webhooktest"
)

// acknowledged sends the creates of plants first to last, four at a time
// through each creator, and returns the ids whose create was acknowledged.
func acknowledged(first, last int64, creators ...*creator) []int64 {
	var (
		mu    sync.Mutex
		acked []int64
		wg    sync.WaitGroup
	)
	ids := make(chan int64)
	for _, c := range creators {
		for range 4 {
			wg.Go(func() {
				for id := range ids {
					if c.post(plantFor(id), "").status == 200 {
						mu.Lock()
						acked = append(acked, id)
						mu.Unlock()
					}
				}
			})
		}
	}
	for id := first; id <= last; id++ {
		ids <- id
	}
	close(ids)
	wg.Wait()
	return acked
}

// crash ends p with SIGKILL, which leaves it no time to tidy up, and checks
// that the signal is what ended it.
func crash(t *testing.T, p *process) {
	t.Helper()
	p.signal(t, syscall.SIGKILL)
	if state := p.waitExit(t, 10*time.Second); !killedBy(state, syscall.SIGKILL) {
		t.Fatalf("the service exited with %v, want SIGKILL", state)
	}
}

// Claims last twice the attempt timeout: with this setting, the claims a
// killed process held end 4s after they were taken.
var shortClaims = map[string]string{"PLANTSTORE_WEBHOOK_TIMEOUT": "2s"}

// A SIGKILL right after acknowledged writes loses no delivery: the
// restarted service announces every acknowledged plant with the plant
// payload, and every acknowledged create, change and delete, each its
// event in its envelope, with the event payload.
func TestWebhookEventsSurviveSIGKILL(t *testing.T) {
	for _, payload := range []string{"plant", "event"} {
		t.Run(payload, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, db string) {
				h := newHooks(t)
				script, bringUp := webhooktest.DownUntilUp(503, 204)
				r := h.receiver(t, webhooktest.Answering(script))
				env := h.env(shortClaims, r.URL)
				if payload == "event" {
					env["PLANTSTORE_WEBHOOK_PAYLOAD"] = payload
				}
				p := startProcess(t, db, env)
				if payload == "plant" {
					acked := acknowledged(1, 40, newCreator(t, p, 4))
					crash(t, p)
					bringUp()
					startProcess(t, db, env)
					r.WaitPlants(t, acked, 30*time.Second)
					return
				}
				writes := acknowledgedWrites(1, 30, newCreator(t, p, 4))
				crash(t, p)
				bringUp()
				startProcess(t, db, env)
				waitEnvelopes(t, r, writes, 30*time.Second)
			})
		})
	}
}

// written is an acknowledged write as its event tells it: its type and the
// plant's item after it (for a delete, the state it had).
type written struct{ typ, item string }

// acknowledgedWrites sends, for each plant first to last, four at a time,
// its create, a change of its name, and, for every other plant, its
// delete, each once the one before was acknowledged, and returns each
// plant's acknowledged writes in order.
func acknowledgedWrites(first, last int64, c *creator) map[int64][]written {
	var (
		mu     sync.Mutex
		writes = map[int64][]written{}
		wg     sync.WaitGroup
	)
	ids := make(chan int64)
	for range 4 {
		wg.Go(func() {
			for id := range ids {
				var done []written
				created := plantFor(id)
				changed := strings.Replace(created, fmt.Sprintf(`"name":"Plant %d"`, id), fmt.Sprintf(`"name":"Changed %d"`, id), 1)
				if a := c.post(created, ""); a.status == 200 {
					done = append(done, written{"plant.created", created})
					if a := c.write(http.MethodPatch, id, fmt.Sprintf(`{"name":"Changed %d"}`, id)); a.status == 200 {
						done = append(done, written{"plant.changed", changed})
						if id%2 == 0 {
							if a := c.write(http.MethodDelete, id, ""); a.status == 204 {
								done = append(done, written{"plant.deleted", changed})
							}
						}
					}
				}
				mu.Lock()
				writes[id] = done
				mu.Unlock()
			}
		})
	}
	for id := first; id <= last; id++ {
		ids <- id
	}
	close(ids)
	wg.Wait()
	return writes
}

// waitEnvelopes waits at most within until r got, for every plant of
// writes, the envelope of each of its writes (repeats, which at-least-once
// delivery allows, carry the webhook-id of the first), and checks them: in
// the order of their numbers, a plant's envelopes are its writes in the
// order they were acknowledged, each with the plant's item byte for byte,
// its event's id and type, and the commit time as the timestamp. Every
// delivery verified with the Standard Webhooks reference library
// (webhooktest), which rejects any other.
func waitEnvelopes(t *testing.T, r *webhooktest.Receiver, writes map[int64][]written, within time.Duration) {
	t.Helper()
	want := 0
	for _, w := range writes {
		want += len(w)
	}
	require.Positive(t, want, "no write was acknowledged")
	var byPlant map[int64][]webhooktest.Envelope
	require.Eventually(t, func() bool {
		envelopes, ids := r.Envelopes()
		byPlant = map[int64][]webhooktest.Envelope{}
		seen := map[string]webhooktest.Envelope{}
		for i, e := range envelopes {
			if first, again := seen[ids[i]]; again {
				require.Equal(t, first, e, "a repeated delivery %s with another body", ids[i])
				continue
			}
			seen[ids[i]] = e
			var p struct{ ID int64 }
			require.NoError(t, json.Unmarshal(e.Data.Plant, &p))
			byPlant[p.ID] = append(byPlant[p.ID], e)
		}
		return len(seen) >= want
	}, within, 20*time.Millisecond, "%d acknowledged writes, not all of them announced", want)
	for id, ws := range writes {
		got := byPlant[id]
		slices.SortFunc(got, func(a, b webhooktest.Envelope) int { return cmp.Compare(a.Data.Number, b.Data.Number) })
		require.Len(t, got, len(ws), "plant %d: envelopes %+v; want one per acknowledged write %+v", id, got, ws)
		for i, w := range ws {
			e := got[i]
			require.True(t, e.Type == w.typ && e.Data.Type == w.typ && string(e.Data.Plant) == w.item &&
				e.Data.ID == fmt.Sprintf("evt_%d", e.Data.Number) && e.Timestamp.Equal(e.Data.Time) && !e.Data.Time.IsZero(),
				"plant %d, write %d: envelope %+v (plant %s); want %s of %s", id, i, e, e.Data.Plant, w.typ, w.item)
		}
	}
}

// Two replicas on one PostgreSQL database share the deliveries, of either
// payload: every event is delivered, and in normal operation none twice.
func TestTwoReplicasShareTheDeliveries(t *testing.T) {
	for _, payload := range []string{"plant", "event"} {
		t.Run(payload, func(t *testing.T) {
			db := pgtest.NewDatabase(t)
			h := newHooks(t)
			r := h.receiver(t)
			env := h.env(map[string]string{"PLANTSTORE_WEBHOOK_PAYLOAD": payload}, r.URL)
			a, b := startProcess(t, db, env), startProcess(t, db, env)
			acked := acknowledged(1, 200, newCreator(t, a, 4), newCreator(t, b, 4))
			require.Zero(t, r.WaitPlants(t, acked, 30*time.Second), "events delivered more than once by two replicas in normal operation")
			// Both took part.
			delivered := regexp.MustCompile(`(?m)^plantstore_webhook_attempts_total\{outcome="delivered"\} ([1-9]\d*)$`)
			byReplica := [][]string{delivered.FindStringSubmatch(scrape(a.admin)), delivered.FindStringSubmatch(scrape(b.admin))}
			require.True(t, byReplica[0] != nil && byReplica[1] != nil, "deliveries by replica: %q; want both to share them", byReplica)
			t.Logf("%d plants announced once each by two replicas (%s and %s)", len(acked), byReplica[0][1], byReplica[1][1])
		})
	}
}

// A replica killed while its attempts hang leaves its claims behind; once
// their lease ends, the other replica takes them over and delivers every
// acknowledged event.
func TestAKilledReplicasClaimsAreTakenOver(t *testing.T) {
	db := pgtest.NewDatabase(t)
	h := newHooks(t)
	r := h.receiver(t, webhooktest.Holding())
	env := h.env(shortClaims, r.URL)
	a := startProcess(t, db, env)
	startProcess(t, db, env) // the replica that takes over
	acked := acknowledged(1, 40, newCreator(t, a, 4))
	// Each replica has 16 attempt slots: 17 hanging attempts mean both
	// hold claims.
	r.WaitHeld(t, func(n int) bool { return n >= 17 }, 10*time.Second, "want both replicas holding claims")
	crash(t, a)
	// The receiver drops the killed replica's attempts: none of them counts
	// as a delivery.
	r.WaitHeld(t, func(n int) bool { return n <= 16 }, 5*time.Second, "the killed replica's attempts should have ended")
	r.Release()
	repeated := r.WaitPlants(t, acked, 30*time.Second)
	t.Logf("%d events delivered after one of two replicas was killed holding claims; %d more than once", len(acked), repeated)
}

// SIGTERM while deliveries are in flight loses nothing, however long a
// receiver may take to answer: attempts answered within the grace period
// finish, those still hanging at its end are cut short, the service exits
// 0, and what was not delivered before the stop is delivered after the
// restart.
func TestSIGTERMMidDeliveryLosesNothing(t *testing.T) {
	for name, answered := range map[string]int{"answered in the grace period": 2, "hanging past it": 0} {
		t.Run(name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, db string) {
				h := newHooks(t)
				r := h.receiver(t, webhooktest.Holding())
				// An attempt may take 10 s, ten times the grace period; a claim
				// the stop could not settle in time comes back when its lease,
				// twice that, ends, within the wait after the restart.
				env := h.env(map[string]string{"PLANTSTORE_WEBHOOK_CONCURRENCY": "2", "PLANTSTORE_WEBHOOK_TIMEOUT": "10s", "PLANTSTORE_SHUTDOWN_TIMEOUT": "1s"}, r.URL)
				p := startProcess(t, db, env)
				acked := acknowledged(1, 30, newCreator(t, p, 4))
				r.WaitHeld(t, func(n int) bool { return n == 2 }, 10*time.Second, "want both slots in flight")
				p.signal(t, syscall.SIGTERM)
				r.Let(answered) // the attempts in flight, and no later one
				// The attempts would run for 10 s; the grace period is a second.
				if state := p.waitExit(t, 8*time.Second); state.ExitCode() != 0 {
					t.Fatalf("exit %v\n%s", state, p.output())
				}
				require.Len(t, r.Deliveries(), answered, "events delivered before the stop, of %d", len(acked))
				r.Release()
				startProcess(t, db, env)
				r.WaitPlants(t, acked, 30*time.Second)
			})
		})
	}
}

// SIGTERM with a receiver hanging and the link to PostgreSQL stalled, with
// a query timeout longer than the ten seconds a stop used to be allowed
// beyond its grace period: the attempts cut short at the end of the grace
// period cannot be settled, and the service still exits 0, within the grace
// period plus the query timeout, with its "stopped" line. Before, the
// settlement waited out the query timeout on top of the batches', and the
// stop failed (exit 1).
func TestSIGTERMWithTheStoreStalledAndAReceiverHangingExitsZero(t *testing.T) {
	const grace, queryTimeout = time.Second, 10 * time.Second
	direct := pgtest.NewDatabase(t)
	proxy, proxied := pgproxy.Start(t, direct)
	h := newHooks(t)
	r := h.receiver(t, webhooktest.Holding())
	env := h.env(map[string]string{
		"PLANTSTORE_WEBHOOK_CONCURRENCY": "2", "PLANTSTORE_WEBHOOK_TIMEOUT": "30s",
		"PLANTSTORE_SHUTDOWN_TIMEOUT": grace.String(), "PLANTSTORE_DB_QUERY_TIMEOUT": queryTimeout.String(),
	}, r.URL)
	p := startProcess(t, proxied, env)
	acknowledged(1, 4, newCreator(t, p, 2))
	r.WaitHeld(t, func(n int) bool { return n == 2 }, 10*time.Second, "want both slots in flight")
	proxy.Stall()
	defer proxy.Heal()
	// A read in flight, waiting for the stalled store, when the grace
	// period ends is answered 503 50301, not left to a closed connection.
	read := make(chan string, 1)
	_, metrics := adminGet(p.admin, "/metrics")
	open := openConnections(metrics)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, p.api+"/plants/1", nil)
		req.Header.Set("Authorization", "Bearer "+jwttest.New(t).Token(t, nil))
		resp, err := (&http.Client{Timeout: grace + queryTimeout}).Do(req)
		if err != nil {
			read <- err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		read <- fmt.Sprintf("%d %s", resp.StatusCode, body)
	}()
	// Its connection open, the read is the service's to answer.
	require.Eventually(t, func() bool { _, m := adminGet(p.admin, "/metrics"); return openConnections(m) > open }, time.Minute, 5*time.Millisecond)
	p.signal(t, syscall.SIGTERM)
	state := p.waitExit(t, grace+queryTimeout+5*time.Second)
	if state.ExitCode() != 0 || !strings.Contains(p.output(), `"msg":"stopped"`) {
		t.Fatalf("exit %v, want 0 and the stopped line\n%s", state, p.output())
	}
	if got := <-read; !strings.HasPrefix(got, "503 ") || !strings.Contains(got, "50301") {
		t.Errorf("the read in flight at the end of the grace period: %s; want 503 50301", got)
	}
	r.Release()
}
