package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres/pgcluster"
)

// patroniDeadline is the query timeout of the services under Patroni.
const patroniDeadline = 2 * time.Second

// patroniBack is the time from a fault to writes acknowledged again on
// every route that a quiet machine meets; a test waits twice as long.
const patroniBack = 15 * time.Second

// serviceBack bounds the time from a cluster writable again to writes
// acknowledged on every replica: a write under way at the fault ends at its
// deadline, and the next logs in to the new leader, a login bounded by
// connect_timeout (2 s) for each of the multi-host URL's three members.
// Twice that, for a busy machine.
const serviceBack = 2 * (patroniDeadline + 3*2*time.Second)

// replica is one service of the suite and the writes it acknowledged.
type replica struct {
	route  string
	s      *service
	ledger *writeLedger
}

// The service under the manager operators run: a Patroni cluster of three
// members, synchronous and strict (deployments/patroni), with two service
// replicas on each routing, the multi-host URL with
// target_session_attrs=read-write, and HAProxy following Patroni's REST
// check (one replica through PgBouncer in front of it, as that
// deployment's README shows). Under a steady load of creates, changes and
// deletes on every replica, and a reader of the event feed at its head on
// each routing, the leader is killed with -9, switched over with
// patronictl, and cut off from etcd, in turn, on one cluster: each fault
// ends with the cluster whole again, the old leader rejoined as a replica.
// Throughout, no answer is a 500 or past the deadline; after each fault
// every route acknowledges writes again within 15 s; at the end every
// acknowledged write is on the leader, and every reader read the feed's
// events exactly once, in its order, none of them lost.
func TestFailoverUnderPatroni(t *testing.T) {
	h := pgcluster.StartHA(t)
	env := map[string]string{"PLANTSTORE_DB_QUERY_TIMEOUT": patroniDeadline.String()}
	pooled := map[string]string{"PLANTSTORE_DB_QUERY_TIMEOUT": patroniDeadline.String(), "PLANTSTORE_DATABASE_POOLER": "transaction"}
	replicas := []*replica{
		{route: "multi-host", s: startService(t, h.MultiHostURL(), env)},
		{route: "multi-host", s: startService(t, h.MultiHostURL(), env)},
		{route: "haproxy", s: startService(t, h.HAProxyURL(), env)},
		{route: "haproxy", s: startService(t, h.PgBouncerURL(), pooled)},
	}
	const workers = 3
	for _, r := range replicas {
		r.ledger = &writeLedger{s: r.s, token: r.s.token(t, nil), client: newLoadClient(workers),
			names: map[int64]string{}, deleted: map[int64]bool{}}
		r.ledger.client.Timeout = patroniDeadline + 3*time.Second
	}
	// Transaction ids handed out on another database of the leader, which a
	// crash of the leader loses: a promoted member hands them out again.
	leaderDB := h.Leader(t).DB(t)
	_, err := leaderDB.Exec("CREATE DATABASE burner")
	require.NoError(t, err)

	load, stopLoad := context.WithCancel(context.Background())
	var running sync.WaitGroup
	for i, r := range replicas {
		for w := range workers {
			running.Go(func() {
				// Ids of their own: replica i, worker w.
				for id := int64(i*workers+w) + 1; load.Err() == nil; id += int64(len(replicas) * workers) {
					r.ledger.lifecycle(t, id)
				}
			})
		}
	}
	running.Go(func() {
		pgcluster.BurnTransactionIDs(load, t, strings.Replace(h.MultiHostURL(), "/postgres?", "/burner?", 1))
	})
	token := replicas[0].s.token(t, nil)
	walkers := []*httpFeedWalker{{s: replicas[0].s, token: token}, {s: replicas[2].s, token: token}}
	for _, w := range walkers {
		running.Go(func() { w.walk(load, t) })
	}
	defer func() { stopLoad(); running.Wait() }()

	acked := func() int {
		n := 0
		for _, r := range replicas {
			n += len(r.ledger.acked())
		}
		return n
	}
	faults := []struct {
		name  string
		apply func() (restore func())
	}{
		{"the leader killed with -9", func() func() { h.KillLeader(t); return func() {} }},
		{"patronictl switchover", func() func() { h.Switchover(t); return func() {} }},
		{"the leader cut off from etcd", func() func() { return h.CutLeaderOffEtcd(t) }},
	}
	for _, f := range faults {
		before := acked()
		require.Eventually(t, func() bool { return acked() >= before+100 }, time.Minute, 5*time.Millisecond, "no load before %s", f.name)
		old := h.Leader(t)
		at := time.Now()
		restore := f.apply()
		// The fault holds until another member leads with a synchronous
		// standby, and every replica has had writes acknowledged by it.
		leader := h.WaitWritable(t, old)
		writable := time.Now()
		for _, r := range replicas {
			require.Eventually(t, func() bool { return r.ledger.lastAck.Load() > writable.UnixNano() }, 2*patroniBack, time.Millisecond,
				"%s: no write acknowledged through %s (%s) after %s led", f.name, r.s.api, r.route, leader.Name)
		}
		served := time.Now()
		gap := longestGap(replicas, at)
		t.Logf("%s: %s led with a synchronous standby %s after the fault, every replica acknowledged writes %s after that; the longest time without an acknowledged write on a replica %s",
			f.name, leader.Name, writable.Sub(at).Round(time.Millisecond), served.Sub(writable).Round(time.Millisecond), gap.Round(time.Millisecond))
		// How soon Patroni promotes is its configuration's (ttl, loop_wait)
		// and the machine's pace; the service's own part is the time from a
		// writable cluster to writes acknowledged on every replica, which
		// its deadline and login bound. Both together were within 15 s on a
		// quiet 2-core machine (docs/operations.md, Patroni).
		if took := served.Sub(writable); took > serviceBack {
			t.Errorf("%s: writes were acknowledged on every replica %s after the cluster was writable; want within %s", f.name, took.Round(time.Millisecond), serviceBack)
		}
		restore()
		h.WaitHealthy(t)
	}
	stopLoad()
	running.Wait()

	for _, r := range replicas {
		l := r.ledger
		l.mu.Lock()
		for _, f := range l.faults {
			t.Errorf("%s: an answer other than the expected one or 503 50301 with Retry-After: %s", r.route, f)
		}
		if l.slowest > patroniDeadline+time.Second {
			t.Errorf("%s: the slowest request took %s; want it answered by its deadline, %s", r.route, l.slowest, patroniDeadline)
		}
		l.mu.Unlock()
		checkOnThePrimary(t, h.Leader(t).DB(t), l)
	}
	checkFeedWalkers(t, replicas[1].s, token, walkers)
}

// longestGap is the longest time since at during which some replica
// acknowledged no write, up to its latest acknowledgement.
func longestGap(replicas []*replica, at time.Time) time.Duration {
	var longest time.Duration
	for _, r := range replicas {
		longest = max(longest, r.ledger.gapSince(at))
	}
	return longest
}

// A write the standbys never confirmed is never shown, under Patroni as by
// hand: with every standby's WAL receiver stopped, a create, a change and a
// delete are answered 503 at their deadline, and so is each of them sent
// again (a replay, a change that would change nothing, a delete that would
// find nothing); every read shows the state before. Then the leader's
// machine is lost (its Patroni too: nothing starts the old primary again)
// and the standbys crash: Patroni promotes the synchronous one, and every
// state the service showed is the new leader's. The service reaches the
// leader through HAProxy: with the multi-host URL, a stopped member listed
// before the leader takes each new session's connect_timeout first
// (docs/operations.md, "Patroni").
func TestARetryUnderPatroniNeverShowsWhatAFailoverLoses(t *testing.T) {
	h := pgcluster.StartHA(t)
	s := startService(t, h.HAProxyURL(), map[string]string{"PLANTSTORE_DB_QUERY_TIMEOUT": patroniDeadline.String()})
	s.create(t, `{"id":1,"name":"before"}`).expect(t, 200, "")
	s.create(t, `{"id":3,"name":"kept"}`).expect(t, 200, "")
	auth := map[string]string{"Authorization": "Bearer " + s.token(t, nil)}
	patch := map[string]string{"Authorization": auth["Authorization"], "Content-Type": "application/merge-patch+json"}

	stopped := h.StopStandbys(t)
	for attempt := range 2 {
		for _, a := range []answer{
			s.create(t, `{"id":2,"name":"unconfirmed"}`),
			s.do(t, http.MethodPatch, "/plants/1", patch, []byte(`{"name":"renamed"}`)),
			s.do(t, http.MethodDelete, "/plants/3", auth, nil),
		} {
			if !a.unavailable() {
				t.Fatalf("a write without its standbys, attempt %d: %s; want 503 50301", attempt+1, a)
			}
		}
	}
	shown := map[string]answer{}
	for _, path := range []string{"/plants/1", "/plants/2", "/plants/3"} {
		require.Eventually(t, func() bool {
			shown[path] = s.call(t, http.MethodGet, path)
			return !shown[path].unavailable()
		}, time.Minute, 10*time.Millisecond, "GET %s without the standbys: %s", path, shown[path])
	}
	shown["/plants/1"].expect(t, 200, `{"id":1,"name":"before"}`)
	shown["/plants/2"].expectError(t, 404, "40402")
	shown["/plants/3"].expect(t, 200, `{"id":3,"name":"kept"}`)

	lost := h.LoseLeader(t)
	h.KillStopped(t, stopped)
	h.WaitWritable(t, lost)
	require.Eventually(t, func() bool { return s.call(t, http.MethodGet, "/plants/1").status == http.StatusOK }, 60*time.Second, 50*time.Millisecond,
		"the service never read from the promoted member")
	for path, before := range shown {
		if after := s.call(t, http.MethodGet, path); after.status != before.status || after.body != before.body {
			t.Errorf("GET %s after the failover: %s; shown before it: %s", path, after, before)
		}
	}
}
