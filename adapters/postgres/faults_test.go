package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/postgres/pgproxy"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// faultDeadline is each call's deadline in the fault tests, as a request's
// would be (PLANTSTORE_DB_QUERY_TIMEOUT), and the store's query timeout.
const faultDeadline = time.Second

// lateBy is how far past its deadline a call may answer: the contract's
// one second.
const lateBy = time.Second

// faultLoad runs writes and reads against a store through a faulty link and
// keeps what the store acknowledged.
type faultLoad struct {
	s *Store

	mu       sync.Mutex
	names    map[int64]string // acknowledged present, with this name
	deleted  map[int64]bool   // acknowledged deleted
	slowest  time.Duration
	failures []error // errors other than ErrUnavailable
	calls    atomic.Int64
	refused  atomic.Int64
	acked    atomic.Int64
	lastAck  atomic.Int64 // unix nanoseconds
}

func newFaultLoad(s *Store) *faultLoad {
	return &faultLoad{s: s, names: map[int64]string{}, deleted: map[int64]bool{}}
}

// call runs f under the deadline and records how it ended; ok says that it
// was acknowledged. A write that failed leaves its plant unknown.
func (l *faultLoad) call(id int64, f func(ctx context.Context) error) (ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), faultDeadline)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	took := time.Since(start)
	l.calls.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.slowest = max(l.slowest, took)
	switch {
	case err == nil:
		l.acked.Add(1)
		l.lastAck.Store(time.Now().UnixNano())
		return true
	case errors.Is(err, application.ErrUnavailable):
		l.refused.Add(1)
	default:
		l.failures = append(l.failures, fmt.Errorf("plant %d: %w", id, err))
	}
	delete(l.names, id)
	delete(l.deleted, id)
	return false
}

// lifecycle creates, renames, reads and (one in three) deletes plant id.
func (l *faultLoad) lifecycle(id int64) {
	rec := application.Record{Plant: plant(id, fmt.Sprintf("Fern %d", id)), CreatedBy: "tester", CreatedAt: time.Now()}
	if !l.call(id, func(ctx context.Context) error { _, _, err := l.s.InsertIfAbsent(ctx, rec); return err }) {
		return
	}
	l.set(func() { l.names[id] = rec.Plant.Name().String() })
	name, _ := domain.ParseName(fmt.Sprintf("Fern %d renamed", id))
	if !l.call(id, func(ctx context.Context) error {
		_, err := l.s.UpdatePlant(ctx, domain.ID(id), func(p domain.Plant) (domain.Plant, error) { return p.WithName(name), nil })
		return err
	}) {
		return
	}
	l.set(func() { l.names[id] = name.String() })
	l.call(id, func(ctx context.Context) error {
		p, ok, err := l.s.FindPlant(ctx, domain.ID(id))
		if err == nil && (!ok || p.Name() != name) {
			err = fmt.Errorf("read %v, %v; want the acknowledged %q", p.Name(), ok, name)
		}
		return err
	})
	l.call(id, func(ctx context.Context) error {
		_, err := l.s.ListPlants(ctx, application.ListQuery{Limit: 10, After: domain.ID(id - 5), HasAfter: true})
		return err
	})
	if id%3 == 0 && l.call(id, func(ctx context.Context) error {
		deleted, err := l.s.DeletePlant(ctx, domain.ID(id))
		if err == nil && !deleted {
			err = errors.New("acknowledged plant not found to delete")
		}
		return err
	}) {
		l.set(func() { delete(l.names, id); l.deleted[id] = true })
	}
}

func (l *faultLoad) set(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// run starts workers until the returned stop is called, which waits for them.
func (l *faultLoad) run(workers int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for id := int64(w + 1); ctx.Err() == nil; id += int64(workers) {
				l.lifecycle(id)
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// check fails t for every call past its deadline by more than lateBy, every
// failure other than unavailability, and every acknowledged write missing
// from the database, read directly, not through the proxy.
func (l *faultLoad) check(t *testing.T, direct string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.slowest > faultDeadline+lateBy {
		t.Errorf("the slowest call took %s; want every answer within its deadline (%s) plus %s", l.slowest.Round(time.Millisecond), faultDeadline, lateBy)
	}
	for _, err := range l.failures {
		t.Errorf("a call failed other than as unavailable: %v", err)
	}
	db, err := sqlx.Open("postgres", direct)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stored := map[int64]string{}
	rows, err := db.Query("SELECT id, name FROM plants")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		stored[id] = name
	}
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
	t.Logf("%d calls: %d acknowledged, %d refused as unavailable; slowest %s; %d plants and %d deletes checked",
		l.calls.Load(), l.acked.Load(), l.refused.Load(), l.slowest.Round(time.Millisecond), len(l.names), len(l.deleted))
}

func plant(id int64, name string) domain.Plant {
	np, err := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: name})
	if err != nil {
		panic(err)
	}
	return domain.PlantFrom(np)
}

// faultyStore opens a migrated store on a fresh database through a proxy,
// and returns the proxy and the database's own URL.
func faultyStore(t *testing.T) (*Store, *pgproxy.Proxy, string) {
	t.Helper()
	_, direct := newStore(t) // migrates the database
	proxy, proxied := pgproxy.Start(t, direct)
	s := openStore(t, proxied, func(c *Config) { c.QueryTimeout = faultDeadline; c.MaxOpenConns = 4 })
	return s, proxy, direct
}

// underFault runs the load through a healthy link, then through the fault
// that breaks it for hold, then heals it with what the fault returned; it checks that every call answered within its
// deadline, that readiness answered within a second throughout, that
// writes are acknowledged again within a few seconds of the heal, and
// that nothing acknowledged was lost.
func underFault(t *testing.T, fault func(*pgproxy.Proxy) (heal func()), hold time.Duration) {
	s, proxy, direct := faultyStore(t)
	l := newFaultLoad(s)
	stop := l.run(8)
	defer stop()
	waitFor(t, func() bool { return l.acked.Load() >= 100 }, "no write acknowledged before the fault")

	heal := fault(proxy)
	ackedBefore, refusedBefore := l.acked.Load(), l.refused.Load()
	pingSlowest := pingFor(t, s, hold)
	if l.refused.Load() == refusedBefore {
		t.Errorf("no call refused in %s of the fault", hold)
	}
	t.Logf("during the fault: %d acknowledged, %d refused; slowest readiness ping %s",
		l.acked.Load()-ackedBefore, l.refused.Load()-refusedBefore, pingSlowest.Round(time.Millisecond))

	heal()
	healed := time.Now()
	waitFor(t, func() bool { return l.lastAck.Load() > healed.UnixNano() }, "no write acknowledged after the heal")
	t.Logf("first acknowledgement %s after the heal", time.Unix(0, l.lastAck.Load()).Sub(healed).Round(time.Millisecond))
	after := l.acked.Load()
	waitFor(t, func() bool { return l.acked.Load() >= after+100 }, "the load did not resume after the heal")
	stop()
	l.check(t, direct)
}

// pingFor pings s as a readiness probe does, with its one-second bound,
// for d, and fails t for a ping that answered later than a second past it.
func pingFor(t *testing.T, s *Store, d time.Duration) (slowest time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		start := time.Now()
		err := s.Ping(ctx)
		took := time.Since(start)
		cancel()
		slowest = max(slowest, took)
		if err != nil && !errors.Is(err, application.ErrUnavailable) {
			t.Errorf("Ping: %v; want nil or ErrUnavailable", err)
		}
		if took > time.Second+lateBy {
			t.Errorf("a readiness ping took %s", took.Round(time.Millisecond))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return slowest
}

func waitFor(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for end := time.Now().Add(15 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatal(msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The link drops every packet and keeps its connections, as a partition or
// a frozen host does, for three deadlines: calls in flight and calls made
// meanwhile answer unavailable at their deadline, new sessions' logins are
// cut at it, and once the link heals the store works again on fresh
// sessions.
func TestAStalledLinkAnswersEveryCallWithinItsDeadline(t *testing.T) {
	underFault(t, func(p *pgproxy.Proxy) func() { p.Stall(); return p.Heal }, 3*faultDeadline)
}

// Every exchange takes longer than the deadline: each call answers
// unavailable at its deadline instead of when the late answer comes.
func TestLatencyPastTheDeadlineAnswersWithinIt(t *testing.T) {
	underFault(t, func(p *pgproxy.Proxy) func() { p.Delay(3 * faultDeadline / 2); return p.Heal }, 3*faultDeadline)
}

// Every connection is reset again and again: calls fail as unavailable, at
// once, and nothing acknowledged is lost.
func TestConnectionResetsAreUnavailableAndLoseNothing(t *testing.T) {
	underFault(t, func(p *pgproxy.Proxy) func() {
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
					p.Reset()
				}
			}
		}()
		return func() { close(stop); <-stopped }
	}, 2*faultDeadline)
}

// A connection lost after a write was sent leaves its outcome unknown: the
// write is answered unavailable, and never run again on another connection,
// where it would answer what the second run found. Here the first delete
// committed and its answer was lost; run again, it would find nothing and
// say that no plant was there.
func TestAWriteWhoseAnswerWasLostIsNotRunAgain(t *testing.T) {
	_, direct := newStore(t)
	proxy, proxied := pgproxy.Start(t, direct)
	s := openStore(t, proxied, func(c *Config) { c.MaxOpenConns = 1 })
	ctx := context.Background()
	storeFerns(t, s, 1, 2)
	// The delete statement is prepared on the one session, whose next
	// answer is then the delete's.
	if _, err := s.DeletePlant(ctx, 2); err != nil {
		t.Fatal(err)
	}
	proxy.CutNextAnswer()
	deleted, err := s.DeletePlant(ctx, 1)
	if !errors.Is(err, application.ErrUnavailable) {
		t.Fatalf("DeletePlant with its answer lost = %v, %v; want ErrUnavailable", deleted, err)
	}
	if found, err := s.DeletePlant(ctx, 1); err != nil || found {
		t.Fatalf("the delete, run once, did not commit: %v, %v", found, err)
	}
}

// A statement whose context ends while the link is stalled has lib/pq send
// a cancel request on a new socket, which the stalled link accepts and
// never answers; lib/pq waits for it before the statement's call returns.
// That wait ends within cancelTimeout, so that no batch is held past it:
// the store closes within a deadline and the cancel's bound of the calls
// in flight, here after each of several stalls (which of lib/pq's two
// watchers sees the deadline first is chance).
func TestAStalledCancelRequestHoldsNoBatch(t *testing.T) {
	for round := range 4 {
		s, proxy, _ := faultyStore(t)
		storeFerns(t, s, 1, 2)
		proxy.Stall()
		var calls sync.WaitGroup
		for k := range 4 {
			calls.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), faultDeadline)
				defer cancel()
				_, _, _ = s.InsertIfAbsent(ctx, application.Record{Plant: plant(int64(100+k), "Fern"), CreatedBy: "tester", CreatedAt: time.Now()})
			})
			calls.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), faultDeadline)
				defer cancel()
				_, _ = s.ListPlants(ctx, application.ListQuery{Limit: 10})
			})
		}
		calls.Wait()
		start := time.Now()
		closed := make(chan struct{})
		go func() { s.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(faultDeadline + cancelTimeout + lateBy):
			t.Errorf("round %d: the store did not close within %s of its calls' answers, with the link stalled", round, time.Since(start).Round(time.Millisecond))
		}
		proxy.Heal()
		<-closed
	}
}
