package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres/pgcluster"
)

// What synchronous_mode_strict buys, measured: the leader is killed under a
// steady load of writes, and the new leader's synchronous_standby_names is
// watched until a standby is synchronous again. Not strict, Patroni empties
// it while no standby is ready, and every write acknowledged meanwhile is on
// the new leader alone, lost if it fails in turn; strict, no write is
// acknowledged until a standby has it. Strict, the test fails on any write
// acknowledged while the leader had no standby; not strict, it logs them,
// the figure docs/operations.md gives:
//
//	go test -run TestWhatStrictSynchronousModeBuys -v ./cmd/plantstore
func TestWhatStrictSynchronousModeBuys(t *testing.T) {
	h := pgcluster.StartHA(t)
	s := startService(t, h.MultiHostURL(), map[string]string{"PLANTSTORE_DB_QUERY_TIMEOUT": patroniDeadline.String()})
	for _, strict := range []bool{true, false} {
		h.SetStrict(t, strict)
		const workers = 4
		l := &writeLedger{s: s, token: s.token(t, nil), client: newLoadClient(workers), names: map[int64]string{}, deleted: map[int64]bool{}}
		load, stop := context.WithCancel(context.Background())
		var running sync.WaitGroup
		base := int64(1_000_000)
		if !strict {
			base = 2_000_000
		}
		for w := range workers {
			running.Go(func() {
				for id := base + int64(w); load.Err() == nil; id += workers {
					l.lifecycle(t, id)
				}
			})
		}
		require.Eventually(t, func() bool { return len(l.acked()) >= 100 }, time.Minute, 5*time.Millisecond, "no load")
		old := h.Leader(t)
		killed := time.Now()
		h.KillLeader(t)
		var leader *pgcluster.Member
		require.Eventually(t, func() bool { leader = h.Leader(t); return leader != old }, time.Minute, 10*time.Millisecond)
		// Watch the new leader until a standby is synchronous.
		db := leader.DB(t)
		var unguarded []time.Time // when the leader was seen with no standby named
		var synced time.Time
		require.Eventually(t, func() bool {
			var names string
			var streaming int
			if db.QueryRow("SHOW synchronous_standby_names").Scan(&names) != nil ||
				db.QueryRow("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'").Scan(&streaming) != nil {
				return false
			}
			if names == "" {
				unguarded = append(unguarded, time.Now())
			}
			synced = time.Now()
			return streaming > 0 && names != ""
		}, 60*time.Second, 20*time.Millisecond, "no standby became synchronous")
		stop()
		running.Wait()
		without := 0
		if len(unguarded) > 0 {
			l.mu.Lock()
			for _, at := range l.ackTimes {
				if !at.Before(unguarded[0]) && !at.After(unguarded[len(unguarded)-1]) {
					without++
				}
			}
			l.mu.Unlock()
		}
		t.Logf("strict %v: a standby synchronous again %s after the kill; the leader named none for %s; %d writes acknowledged meanwhile, on it alone",
			strict, synced.Sub(killed).Round(time.Millisecond), spanOf(unguarded).Round(time.Millisecond), without)
		if strict && (len(unguarded) > 0 || without > 0) {
			t.Errorf("strict: the leader named no standby for %s, and acknowledged %d writes", spanOf(unguarded), without)
		}
		h.WaitHealthy(t)
	}
}

// spanOf is the time from the first to the last of times.
func spanOf(times []time.Time) time.Duration {
	if len(times) == 0 {
		return 0
	}
	return times[len(times)-1].Sub(times[0])
}
