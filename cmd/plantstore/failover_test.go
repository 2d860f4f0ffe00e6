package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres/pgcluster"
	"github.com/plantstore/plantstore/adapters/webhook/webhooktest"
)

// failoverDeadline is the service's query timeout in the failover test:
// the longest a request waits on the store before it answers 503.
const failoverDeadline = 2 * time.Second

// The wired service runs on a primary with a synchronous hot standby,
// reached through a multi-host URL in libpq's authority form, with a
// webhook receiver. The primary dies under creates, changes and deletes
// over HTTP, and the standby is promoted. Meanwhile every answer is the
// expected one or 503 50301 with Retry-After, never a 500 and never past
// the request's deadline; writes are acknowledged again within five seconds
// of the promotion, without a restart; every acknowledged write is on the
// new primary; and the dispatcher resumes: every acknowledged create is
// delivered, those whose delivery was pending when the primary died
// included (held at the receiver until then, some claimed on the old
// primary and settled on no primary).
func TestFailoverOfThePrimaryLosesNoWriteAndNoEvent(t *testing.T) {
	c := pgcluster.Start(t)
	h := newHooks(t)
	receiver := h.receiver(t, webhooktest.Holding())
	defer receiver.Release() // before the service stops
	s := startService(t, c.URL(), h.env(map[string]string{
		"PLANTSTORE_DB_QUERY_TIMEOUT": failoverDeadline.String(),
		// An attempt held past it is retried; its claim, if the settlement
		// is lost with the primary, comes back when the lease (twice
		// this) ends.
		"PLANTSTORE_WEBHOOK_TIMEOUT": "5s",
	}, receiver.URL))

	const workers = 8
	l := &writeLedger{s: s, token: s.token(t, nil), client: newLoadClient(workers),
		names: map[int64]string{}, deleted: map[int64]bool{}}
	l.client.Timeout = failoverDeadline + 3*time.Second // a hang is reported, not waited for
	load, stopLoad := context.WithCancel(context.Background())
	var writers sync.WaitGroup
	for w := range workers {
		writers.Go(func() {
			for id := int64(w) + 1; load.Err() == nil; id += workers {
				l.lifecycle(t, id)
			}
		})
	}
	defer func() { stopLoad(); writers.Wait() }()

	require.Eventually(t, func() bool { return len(l.acked()) >= 150 }, time.Minute, 5*time.Millisecond, "no load before the failover")
	receiver.WaitHeld(t, func(n int) bool { return n > 0 }, 10*time.Second, "attempts in flight before the primary dies")
	pending, inFlight := len(l.acked()), receiver.Held()
	require.Empty(t, receiver.Deliveries(), "the receiver held every delivery until the primary died")
	c.Primary.Kill()
	// The attempts in flight end now: their settlements, and the claims
	// that follow, meet no primary.
	receiver.Release()
	require.Eventually(t, func() bool { return l.refusals.Load() > 0 }, time.Minute, 5*time.Millisecond, "no write refused without a primary")
	c.Promote(t)
	promoted := time.Now()
	require.Eventually(t, func() bool { return l.lastAck.Load() > promoted.UnixNano() }, time.Minute, time.Millisecond,
		"no write acknowledged after the promotion")
	back := time.Unix(0, l.lastAck.Load()).Sub(promoted)
	t.Logf("first acknowledged write %s after the promotion; %d writes refused meanwhile; %d creates pending delivery (%d in flight) when the primary died",
		back.Round(time.Millisecond), l.refusals.Load(), pending, inFlight)
	if back > 5*time.Second {
		t.Errorf("writes came back %s after the promotion; want within 5s", back)
	}
	before := len(l.acked())
	require.Eventually(t, func() bool { return len(l.acked()) >= before+150 }, time.Minute, 5*time.Millisecond, "the load did not resume")
	stopLoad()
	writers.Wait()

	l.mu.Lock()
	for _, f := range l.faults {
		t.Errorf("an answer other than the expected one or 503 50301 with Retry-After: %s", f)
	}
	t.Logf("slowest answer %s (deadline %s)", l.slowest.Round(time.Millisecond), failoverDeadline)
	if l.slowest > failoverDeadline+time.Second {
		t.Errorf("the slowest request took %s; want it answered by its deadline, %s", l.slowest, failoverDeadline)
	}
	l.mu.Unlock()
	checkOnThePrimary(t, c.DB(t, c.Standby), l)

	created := l.acked()
	repeated := receiver.WaitPlants(t, created, 30*time.Second)
	for _, d := range receiver.Deliveries() {
		s.contract.CheckWebhook(t, []byte(d.Body))
		var p struct{ ID int64 }
		if json.Unmarshal([]byte(d.Body), &p) != nil || d.Body != plantFor(p.ID) {
			t.Errorf("delivery %s is not the plant as created: %s", d.ID, d.Body)
		}
	}
	t.Logf("%d acknowledged creates delivered, %d deliveries repeated an event; %d claims failed without a primary",
		len(created), repeated, strings.Count(s.logs.String(), "webhook events could not be claimed"))
}

// writeLedger sends the load's writes and keeps what the service
// acknowledged, per plant: the name it last acknowledged, or that it
// acknowledged the delete. A plant whose last write was refused is left
// out: that write may or may not have committed.
type writeLedger struct {
	s      *service
	token  string
	client *http.Client

	mu       sync.Mutex
	names    map[int64]string // acknowledged, present
	deleted  map[int64]bool   // acknowledged, deleted
	created  []int64          // every acknowledged create, whose event must be delivered
	faults   []string
	slowest  time.Duration
	lastAck  atomic.Int64 // unix nanoseconds of the latest acknowledged write
	refusals atomic.Int64 // 503 50301 answers
	ackTimes []time.Time  // when each acknowledgement came, in order
}

// lifecycle creates plant id, changes its name and, one in three, deletes
// it, each step once the previous one was acknowledged.
func (l *writeLedger) lifecycle(t *testing.T, id int64) {
	path := "/plants/" + strconv.FormatInt(id, 10)
	if a, ok := l.send(t, id, http.MethodPost, "/plants", plantFor(id), http.StatusOK); !ok || !isPlantFor(id, a.body) {
		return
	}
	l.record(func() { l.names[id], l.created = fmt.Sprintf("Plant %d", id), append(l.created, id) })
	changed := fmt.Sprintf("Changed %d", id)
	if a, ok := l.send(t, id, http.MethodPatch, path, `{"name":"`+changed+`"}`, http.StatusOK); !ok || !strings.Contains(a.body, `"name":"`+changed+`"`) {
		return
	}
	l.record(func() { l.names[id] = changed })
	if id%3 == 0 {
		if _, ok := l.send(t, id, http.MethodDelete, path, "", http.StatusNoContent); ok {
			l.record(func() { delete(l.names, id); l.deleted[id] = true })
		}
	}
}

// send sends one write, checked against the OpenAPI document, and reports
// whether it got want. Any other answer makes plant id unknown.
func (l *writeLedger) send(t *testing.T, id int64, method, path, body string, want int) (answer, bool) {
	req, err := http.NewRequest(method, l.s.api+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+l.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	a := exchange(t, l.client, l.s.contract, req)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.slowest = max(l.slowest, time.Since(start))
	switch {
	case a.err == nil && a.status == want:
		now := time.Now()
		l.lastAck.Store(now.UnixNano())
		l.ackTimes = append(l.ackTimes, now)
		return a, true
	case a.unavailable():
		l.refusals.Add(1)
	default:
		l.faults = append(l.faults, fmt.Sprintf("%s %s: %s", method, path, a))
	}
	delete(l.names, id)
	delete(l.deleted, id)
	return a, false
}

func (l *writeLedger) record(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// gapSince is the longest time, from at to the latest acknowledgement,
// without one.
func (l *writeLedger) gapSince(at time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var longest time.Duration
	last := at
	for _, ack := range l.ackTimes {
		if ack.After(last) {
			longest = max(longest, ack.Sub(last))
			last = ack
		}
	}
	return longest
}

// acked is every acknowledged create so far.
func (l *writeLedger) acked() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.created...)
}

// checkOnThePrimary compares the plants on primary with the ledger.
func checkOnThePrimary(t *testing.T, primary *sqlx.DB, l *writeLedger) {
	t.Helper()
	var rows []struct {
		ID   int64
		Name string
	}
	require.NoError(t, primary.Select(&rows, "SELECT id, name FROM plants"))
	stored := map[int64]string{}
	for _, r := range rows {
		stored[r.ID] = r.Name
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, want := range l.names {
		if got, ok := stored[id]; !ok || got != want {
			t.Errorf("plant %d: stored %q (present %v); acknowledged %q", id, got, ok, want)
		}
	}
	for id := range l.deleted {
		if _, ok := stored[id]; ok {
			t.Errorf("plant %d: present; its delete was acknowledged", id)
		}
	}
	t.Logf("%d acknowledged plants and %d acknowledged deletes checked on the new primary", len(l.names), len(l.deleted))
}
