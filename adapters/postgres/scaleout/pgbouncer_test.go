package scaleout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres"
	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/adapters/storetest"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// serverPool is PgBouncer's server pool per database in these tests, smaller
// than one store's pool (replicaPool) and than two stores' together.
const (
	serverPool  = 3
	replicaPool = 8
)

// openPooled opens a store through a transaction pooler at url (and
// migrates it when migrate is set), closed when the test ends.
func openPooled(t testing.TB, url string, migrate bool, receivers ...string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), postgres.Config{
		URL:            url,
		Pooler:         postgres.PoolerTransaction,
		MaxOpenConns:   replicaPool,
		ConnectTimeout: 10 * time.Second,
		Receivers:      receivers,
	})
	if err != nil {
		t.Fatalf("Open through PgBouncer: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if migrate {
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatalf("Migrate through PgBouncer: %v", err)
		}
	}
	return s
}

// The behaviour every store shares holds through PgBouncer in transaction
// mode: start-up, migration, every operation, and the outbox's claims,
// settlements and packed rows, each case on a fresh database whose server
// pool is smaller than the store's.
func TestStoreContractThroughPgBouncer(t *testing.T) {
	b := startBouncer(t, serverPool)
	urls := map[storetest.Store]string{}
	var mu sync.Mutex
	open := func(t *testing.T, receivers []string) *postgres.Store {
		url := b.url(t, pgtest.NewDatabase(t))
		s := openPooled(t, url, true, receivers...)
		mu.Lock()
		urls[s] = url
		mu.Unlock()
		return s
	}
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) storetest.Store { return open(t, nil) },
		Reopen: func(t *testing.T, s storetest.Store) storetest.Store {
			mu.Lock()
			defer mu.Unlock()
			return openPooled(t, urls[s], false)
		},
		OpenOutbox: func(t *testing.T, receivers []string) storetest.OutboxStore { return open(t, receivers) },
	})
}

// Two replicas through one PgBouncer, whose server pool is smaller than
// their two pools together, migrate at once (and find the schema up to date), then create, read, change,
// list and delete from 64 goroutines while both claim and settle the
// webhook events: nothing fails, and every event is claimed once.
func TestTwoReplicasThroughOnePgBouncer(t *testing.T) {
	b := startBouncer(t, serverPool)
	url := b.url(t, pgtest.NewDatabase(t))
	const receiver = "http://receiver.example/hook"
	replicas := []*postgres.Store{openPooled(t, url, false, receiver), openPooled(t, url, false, receiver)}
	var wg sync.WaitGroup
	for _, s := range replicas {
		wg.Go(func() {
			if err := s.Migrate(context.Background()); err != nil {
				t.Errorf("Migrate: %v", err)
			}
			if behind, err := s.SchemaBehind(context.Background()); behind || err != nil {
				t.Errorf("SchemaBehind after Migrate = %v, %v; want false", behind, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	const workers, perWorker = 64, 20
	ctx := context.Background()
	for w := range workers {
		wg.Go(func() {
			s := replicas[w%2]
			for i := range perWorker {
				if err := lifeOfAPlant(ctx, s, replicas[(w+1)%2], int64(w*perWorker+i), i%4 == 3); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	claimed := make(chan []application.Event, 2)
	done := make(chan struct{})
	for _, s := range replicas {
		go func() { claimed <- claimAll(t, s, receiver, done) }()
	}
	wg.Wait()
	close(done)
	seen := map[string]int{}
	for range replicas {
		for _, e := range <-claimed {
			seen[e.ID]++
		}
	}
	// Every plant was created once and announced once; the claims that
	// ran after the writers ended took what was left.
	if want := workers * perWorker; len(seen) != want {
		t.Errorf("%d events claimed; want %d", len(seen), want)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("event %s claimed %d times", id, n)
		}
	}
	pending, _, failed, err := replicas[0].OutboxStats(ctx)
	if err != nil || pending != 0 || failed != 0 {
		t.Errorf("outbox after settling everything: %d pending, %d failed, %v; want none", pending, failed, err)
	}
}

// lifeOfAPlant creates a plant on one replica, reads it on the other,
// changes it, lists it and, when remove is set, deletes it.
func lifeOfAPlant(ctx context.Context, s, other *postgres.Store, id int64, remove bool) error {
	np, err := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: fmt.Sprintf("Fern %d", id)})
	if err != nil {
		return err
	}
	rec := application.Record{Plant: domain.PlantFrom(np), CreatedBy: "tester", CreatedAt: time.Now()}
	if _, created, err := s.InsertIfAbsent(ctx, rec); err != nil || !created {
		return fmt.Errorf("create %d: created %v, %v", id, created, err)
	}
	if _, found, err := other.FindPlant(ctx, domain.ID(id)); err != nil || !found {
		return fmt.Errorf("find %d on the other replica: found %v, %v", id, found, err)
	}
	name, err := domain.ParseName(fmt.Sprintf("Fern %d changed", id))
	if err != nil {
		return err
	}
	if _, err := other.UpdatePlant(ctx, domain.ID(id), func(p domain.Plant) (domain.Plant, error) { return p.WithName(name), nil }); err != nil {
		return fmt.Errorf("change %d: %v", id, err)
	}
	q := application.ListQuery{After: domain.ID(id - 1), HasAfter: id > 0, Limit: 1}
	if page, err := s.ListPlants(ctx, q); err != nil || page.Count != 1 || page.Last != domain.ID(id) ||
		!strings.Contains(string(page.JSON), `"name":"`+name.String()+`"`) {
		return fmt.Errorf("list after %d: %s, %v; want the changed plant", id-1, page.JSON, err)
	}
	if remove {
		if deleted, err := s.DeletePlant(ctx, domain.ID(id)); err != nil || !deleted {
			return fmt.Errorf("delete %d: deleted %v, %v", id, deleted, err)
		}
	}
	return nil
}

// claimAll claims and settles url's events on s until done is closed and
// nothing is left, and returns what it claimed.
func claimAll(t *testing.T, s *postgres.Store, url string, done <-chan struct{}) []application.Event {
	var all []application.Event
	for {
		events, err := s.ClaimDue(context.Background(), url, time.Now().Add(time.Second), time.Minute, 16)
		if err != nil {
			t.Errorf("ClaimDue: %v", err)
			return all
		}
		all = append(all, events...)
		if len(events) == 0 {
			select {
			case <-done:
				return all
			case <-s.Committed():
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		outcomes := make([]application.Settlement, len(events))
		for i, e := range events {
			outcomes[i] = application.Settlement{ID: e.ID, Claim: e.Claim, Delivered: true}
		}
		if err := s.Settle(context.Background(), outcomes); err != nil {
			t.Errorf("Settle: %v", err)
			return all
		}
	}
}

// A store that is not told about the pooler sends start-up options, which
// PgBouncer refuses: start-up fails at once and says what to set, instead
// of retrying until its patience runs out.
func TestStartUpThroughPgBouncerWithoutThePoolerSettingFailsAtOnce(t *testing.T) {
	b := startBouncer(t, serverPool)
	url := b.url(t, pgtest.NewDatabase(t))
	start := time.Now()
	s, err := postgres.Open(context.Background(), postgres.Config{URL: url, ConnectTimeout: 10 * time.Second})
	if err == nil {
		_ = s.Close()
		t.Fatal("Open without the pooler setting succeeded; want PgBouncer's refusal")
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second || !errors.Is(err, postgres.ErrStartupOptionsRefused) {
		t.Errorf("Open failed after %s with %q; want at once, naming the pooler setting", elapsed, err)
	}
}

// PgBouncer holds every query of a database while it is paused (PAUSE),
// and after KILL until RESUME, as an operator does for a maintenance or a failover. The
// store answers every write within its deadline plus a second, as
// unavailable, instead of waiting for the pooler; after RESUME it works
// again without a restart, and nothing it acknowledged is lost.
func TestAPgBouncerThatHoldsQueriesIsAnsweredWithinTheDeadline(t *testing.T) {
	b := startBouncer(t, serverPool)
	direct := pgtest.NewDatabase(t)
	name := pgtest.DatabaseName(direct)
	s, err := postgres.Open(context.Background(), postgres.Config{
		URL: b.url(t, direct), Pooler: postgres.PoolerTransaction, MaxOpenConns: replicaPool,
		QueryTimeout: failoverDeadline, ConnectTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
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
	defer func() { stopLoad(); writers.Wait() }()
	acked := func() int { l.mu.Lock(); defer l.mu.Unlock(); return len(l.created) }

	for _, hold := range []string{"PAUSE " + name, "KILL " + name} {
		require.Eventually(t, func() bool { return acked() >= 100 }, time.Minute, 5*time.Millisecond, "no load before %s", hold)
		refused := l.refusals.Load()
		b.command(t, hold)
		require.Eventually(t, func() bool { return l.refusals.Load() > refused }, time.Minute, 5*time.Millisecond, "no write refused after %s", hold)
		time.Sleep(2 * failoverDeadline) // writes meet the held pooler again and again
		b.command(t, "RESUME "+name)
		resumed := time.Now()
		require.Eventually(t, func() bool { return l.lastAck.Load() > resumed.UnixNano() }, time.Minute, time.Millisecond,
			"no write acknowledged after RESUME following %s", hold)
		t.Logf("%s: %d writes refused; first acknowledged %s after RESUME", hold, l.refusals.Load()-refused,
			time.Unix(0, l.lastAck.Load()).Sub(resumed).Round(time.Millisecond))
		l.mu.Lock()
		clear(l.created)
		l.mu.Unlock()
	}
	stopLoad()
	writers.Wait()

	l.mu.Lock()
	defer l.mu.Unlock()
	for _, err := range l.failures {
		t.Errorf("a write failed other than as unavailable: %v", err)
	}
	if l.slowest > failoverDeadline+time.Second {
		t.Errorf("the slowest write took %s; want it cut at its deadline, %s, plus a second", l.slowest, failoverDeadline)
	}
	checkStored(t, direct, l)
}
