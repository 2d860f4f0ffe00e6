package scaleout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres"
	"github.com/plantstore/plantstore/adapters/postgres/pgcluster"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// failoverDeadline bounds each write of the failover test, as a request's
// deadline would (the store's query timeout).
const failoverDeadline = 2 * time.Second

// ledger keeps what the store acknowledged, per plant: the name it last
// acknowledged, or that it acknowledged the delete. A plant whose last write
// failed is left out: that write may or may not have committed.
type ledger struct {
	mu        sync.Mutex
	names     map[int64]string // acknowledged, present
	deleted   map[int64]bool   // acknowledged, deleted
	created   map[int64]bool   // every acknowledged create, whose event must reach the receiver
	failures  []error          // errors other than ErrUnavailable
	slowest   time.Duration
	lastAck   atomic.Int64 // unix nanoseconds of the latest acknowledged write
	refusals  atomic.Int64 // writes refused as unavailable
	delivered map[int64]bool
	// unsafeSince, when set, is when the cluster lost its synchronous
	// standby (unix nanoseconds): no write started after it may be
	// acknowledged, since none can have reached a standby.
	unsafeSince atomic.Int64
}

// write runs one write under the deadline and records its outcome: ok says
// that it was acknowledged.
func (l *ledger) write(id int64, f func(ctx context.Context) error) (ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), failoverDeadline)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.slowest = max(l.slowest, time.Since(start))
	switch {
	case err == nil:
		if since := l.unsafeSince.Load(); since != 0 && start.UnixNano() > since {
			l.failures = append(l.failures, fmt.Errorf("plant %d: a write was acknowledged without a synchronous standby", id))
		}
		l.lastAck.Store(time.Now().UnixNano())
		return true
	case errors.Is(err, application.ErrUnavailable):
		l.refusals.Add(1)
	default:
		l.failures = append(l.failures, fmt.Errorf("plant %d: %w", id, err))
	}
	delete(l.names, id) // unknown from now on
	delete(l.deleted, id)
	return false
}

// lifecycle creates, changes and (one in three) deletes plant id.
func (l *ledger) lifecycle(s *postgres.Store, id int64) {
	np, _ := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: fmt.Sprintf("Fern %d", id)})
	rec := application.Record{Plant: domain.PlantFrom(np), CreatedBy: "tester", CreatedAt: time.Now()}
	if !l.write(id, func(ctx context.Context) error { _, _, err := s.InsertIfAbsent(ctx, rec); return err }) {
		return
	}
	l.ack(id, func() { l.names[id], l.created[id] = rec.Plant.Name().String(), true })
	name, _ := domain.ParseName(fmt.Sprintf("Fern %d changed", id))
	change := func(ctx context.Context) error {
		_, err := s.UpdatePlant(ctx, domain.ID(id), func(p domain.Plant) (domain.Plant, error) { return p.WithName(name), nil })
		return err
	}
	if !l.write(id, change) {
		return
	}
	l.ack(id, func() { l.names[id] = name.String() })
	if id%3 != 0 {
		return
	}
	remove := func(ctx context.Context) error {
		deleted, err := s.DeletePlant(ctx, domain.ID(id))
		if err == nil && !deleted {
			err = errors.New("acknowledged plant not found to delete")
		}
		return err
	}
	if l.write(id, remove) {
		l.ack(id, func() { delete(l.names, id); l.deleted[id] = true })
	}
}

func (l *ledger) ack(_ int64, f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// deliver claims and settles the receiver's events until ctx ends, as the
// webhook dispatcher does, recording the plants sent; claims and
// settlements that fail are retried, and a claim that was lost comes back
// when its lease ends.
func (l *ledger) deliver(ctx context.Context, t *testing.T, s *postgres.Store, url string) {
	for ctx.Err() == nil {
		events, err := s.ClaimDue(ctx, url, time.Now(), time.Second, 32)
		if err == nil && len(events) > 0 {
			// A claimed event is sent before it is settled. A settlement
			// lost with the primary may still have committed, so the event
			// counts as delivered once claimed; one whose settlement did
			// not commit is claimed again when its lease ends.
			outcomes := make([]application.Settlement, len(events))
			l.mu.Lock()
			for i, e := range events {
				l.delivered[int64(e.PlantID)] = true
				outcomes[i] = application.Settlement{ID: e.ID, Claim: e.Claim, Delivered: true}
			}
			l.mu.Unlock()
			if err = s.Settle(ctx, outcomes); err == nil {
				continue
			}
		}
		if err != nil && !errors.Is(err, application.ErrUnavailable) && ctx.Err() == nil {
			t.Errorf("outbox: %v", err)
		}
		select {
		case <-ctx.Done():
		case <-s.Committed():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// The primary dies under creates, changes and deletes, and its synchronous
// standby is promoted: meanwhile writes are refused as unavailable (never a
// fault, never past their deadline); writes are acknowledged again within
// five seconds of the promotion, through the same store, reached with a
// multi-host URL in libpq's authority form; nothing acknowledged is lost;
// every acknowledged plant's event reaches the receiver; and readers of the
// feed at its head read every event of the new primary's feed exactly
// once, in its order, and none that it does not have.
func TestFailoverToTheSynchronousStandby(t *testing.T) {
	c := pgcluster.Start(t)
	failover(t, c, func(*ledger) { c.Primary.Kill() }, promote(t, c))
}

// promote is the recovery of a failover: the standby is promoted and
// becomes the primary that every acknowledged write must be on.
func promote(t *testing.T, c *pgcluster.Cluster) func(*ledger) *pgcluster.Server {
	return func(*ledger) *pgcluster.Server { c.Promote(t); return c.Standby }
}

// The primary is fenced instead, made read-only while it runs, as failover
// tools do to an old primary: its sessions stay open and refuse writes
// (SQLSTATE 25006). The store drops them instead of failing every request
// on them until they age out, and resumes on the promoted standby.
func TestFailoverFromAFencedPrimary(t *testing.T) {
	c := pgcluster.Start(t)
	primary := c.DB(t, c.Primary)
	failover(t, c, func(*ledger) {
		_, err := primary.Exec("ALTER SYSTEM SET default_transaction_read_only = on")
		if err == nil {
			_, err = primary.Exec("SELECT pg_reload_conf()")
		}
		require.NoError(t, err)
	}, promote(t, c))
}

// The standby dies and the primary runs on: a commit then waits for a
// standby that is not there, until the deadline cancels the wait and
// PostgreSQL commits locally with a warning. No such write is
// acknowledged: each is refused as unavailable, since a failover now would
// lose it. Once the standby is back, writes are acknowledged again.
func TestAWriteWithoutItsStandbyIsNeverAcknowledged(t *testing.T) {
	c := pgcluster.Start(t)
	failover(t, c, func(l *ledger) {
		c.Standby.Kill()
		l.unsafeSince.Store(time.Now().UnixNano())
	}, func(l *ledger) *pgcluster.Server {
		// From its start, the standby may confirm the commits waiting.
		l.unsafeSince.Store(0)
		c.Restart(t, c.Standby)
		c.WaitSynchronous(t)
		return c.Primary
	})
}

// PgBouncer between the service and the primary: it has no failover of its
// own, so after the promotion the failover tool (here the test) points it
// at the new primary and has it reload its settings. Meanwhile writes are
// refused as unavailable within their deadline; after the reload they are
// acknowledged again through the same PgBouncer, and nothing acknowledged is
// lost.
func TestAFailoverBehindPgBouncerRepointedWithReload(t *testing.T) {
	c := pgcluster.Start(t)
	b := startBouncerTo(t, serverPool, fmt.Sprintf("127.0.0.1:%d", c.Primary.Port), "postgres")
	s := openOn(t, b.url(t, c.Primary.URL()), postgres.PoolerTransaction)
	failoverOf(t, s, func(*ledger) { c.Primary.Kill() }, func(*ledger) *pgcluster.Server {
		c.Promote(t)
		b.repoint(t, fmt.Sprintf("127.0.0.1:%d", c.Standby.Port))
		return c.Standby
	})
}

// Two failures in a row: the standby dies, then the primary, and the
// standby is brought back and promoted. It holds every write acknowledged
// before it died, and none was acknowledged after, so nothing acknowledged
// is lost.
func TestAFailoverAfterTheStandbyDiedLosesNothingAcknowledged(t *testing.T) {
	c := pgcluster.Start(t)
	failover(t, c, func(l *ledger) {
		c.Standby.Kill()
		l.unsafeSince.Store(time.Now().UnixNano())
		require.Eventually(t, func() bool { return l.refusals.Load() > 0 }, time.Minute, 5*time.Millisecond, "no write refused without a standby")
		c.Primary.Kill()
	}, func(l *ledger) *pgcluster.Server {
		// The new primary runs without a standby of its own, as a
		// failover tool leaves it until it has a new one.
		l.unsafeSince.Store(0)
		c.Restart(t, c.Standby)
		c.Promote(t)
		return c.Standby
	})
}

// failover runs the load on c, breaks the cluster with outage, mends it
// with recover, which returns the primary from then on, and checks what
// TestFailoverToTheSynchronousStandby describes.
// Meanwhile another database of the primary hands out transaction ids
// that a crash loses, as the feed's walkers read at its head.
func failover(t *testing.T, c *pgcluster.Cluster, outage func(*ledger), recover func(*ledger) *pgcluster.Server) {
	_, err := c.DB(t, c.Primary).Exec("CREATE DATABASE burner")
	require.NoError(t, err)
	burning, stopBurning := context.WithCancel(context.Background())
	burnt := make(chan struct{})
	go func() { defer close(burnt); pgcluster.BurnTransactionIDs(burning, t, c.Primary.URLOf("burner")) }()
	failoverOf(t, openOn(t, c.URL(), postgres.PoolerNone), func(l *ledger) { outage(l); stopBurning(); <-burnt }, recover)
}

// receiver is the webhook receiver whose events the failover tests claim.
const receiver = "http://receiver.example/hook"

// openOn opens a migrated store on url, with the failover tests' deadline
// and receiver, closed when the test ends.
func openOn(t *testing.T, url string, pooler postgres.Pooler) *postgres.Store {
	s, err := postgres.Open(context.Background(), postgres.Config{
		URL: url, Pooler: pooler, MaxOpenConns: 8, QueryTimeout: failoverDeadline, ConnectTimeout: 10 * time.Second, Receivers: []string{receiver},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(context.Background()))
	return s
}

// failoverOf runs failover's load and checks on s.
func failoverOf(t *testing.T, s *postgres.Store, outage func(*ledger), recover func(*ledger) *pgcluster.Server) {

	l := &ledger{names: map[int64]string{}, deleted: map[int64]bool{}, created: map[int64]bool{}, delivered: map[int64]bool{}}
	load, stopLoad := context.WithCancel(context.Background())
	var writers sync.WaitGroup
	const workers = 8
	for w := range workers {
		writers.Go(func() {
			for id := int64(w); load.Err() == nil; id += workers {
				l.lifecycle(s, id)
			}
		})
	}
	dispatch, stopDispatch := context.WithCancel(context.Background())
	dispatched := make(chan struct{})
	go func() { defer close(dispatched); l.deliver(dispatch, t, s, receiver) }()
	walkers := []*feedWalker{{}, {}}
	reading, stopReading := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	for _, w := range walkers {
		readers.Go(func() { w.walk(reading, s) })
	}
	defer func() {
		stopLoad()
		writers.Wait()
		stopDispatch()
		<-dispatched
		stopReading()
		readers.Wait()
	}()

	acked := func() int { l.mu.Lock(); defer l.mu.Unlock(); return len(l.created) }
	require.Eventually(t, func() bool { return acked() >= 200 }, time.Minute, 5*time.Millisecond, "no load before the failover")
	outage(l)
	require.Eventually(t, func() bool { return l.refusals.Load() > 0 }, time.Minute, 5*time.Millisecond, "no write refused during the outage")
	primary := recover(l)
	promoted := time.Now()
	require.Eventually(t, func() bool { return l.lastAck.Load() > promoted.UnixNano() }, time.Minute, time.Millisecond,
		"no write acknowledged after the recovery")
	back := time.Unix(0, l.lastAck.Load()).Sub(promoted)
	t.Logf("first acknowledged write %s after the recovery; %d writes refused meanwhile", back.Round(time.Millisecond), l.refusals.Load())
	if back > 5*time.Second {
		t.Errorf("writes came back %s after the recovery; want within 5s", back)
	}
	before := acked()
	require.Eventually(t, func() bool { return acked() >= before+200 }, time.Minute, 5*time.Millisecond, "the load did not resume")
	stopLoad()
	writers.Wait()

	l.mu.Lock()
	for _, err := range l.failures {
		t.Errorf("a write failed other than as unavailable: %v", err)
	}
	if l.slowest > failoverDeadline+time.Second {
		t.Errorf("the slowest write took %s; want it cut at its deadline, %s", l.slowest, failoverDeadline)
	}
	l.mu.Unlock()
	checkNothingLost(t, primary, l)
	stopReading()
	readers.Wait()
	checkWalkers(t, s, walkers)
	require.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for id := range l.created {
			if !l.delivered[id] {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "an acknowledged plant's event never reached the receiver")
}

// checkNothingLost compares the plants of primary, the one after the
// outage, with the ledger.
func checkNothingLost(t *testing.T, primary *pgcluster.Server, l *ledger) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	checkStored(t, primary.URL(), l)
}

// checkStored compares the plants of the database at url with the ledger,
// whose lock the caller holds.
func checkStored(t *testing.T, url string, l *ledger) {
	t.Helper()
	db, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query("SELECT id, name FROM plants")
	require.NoError(t, err)
	defer rows.Close()
	stored := map[int64]string{}
	for rows.Next() {
		var id int64
		var name string
		require.NoError(t, rows.Scan(&id, &name))
		stored[id] = name
	}
	require.NoError(t, rows.Err())
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
	t.Logf("%d acknowledged plants and %d acknowledged deletes checked", len(l.names), len(l.deleted))
}
