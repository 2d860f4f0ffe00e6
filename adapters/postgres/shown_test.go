package postgres

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres/pgcluster"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// shownDeadline is each call's deadline in these tests, as a request's
// would be.
const shownDeadline = time.Second

// within runs f under shownDeadline.
func within[T any](f func(ctx context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(context.Background(), shownDeadline)
	defer cancel()
	return f(ctx)
}

// openOnCluster opens a migrated store on c's multi-host URL.
func openOnCluster(t *testing.T, c *pgcluster.Cluster) *Store {
	t.Helper()
	s := openStore(t, c.URL(), func(cfg *Config) { cfg.QueryTimeout = shownDeadline; cfg.MaxOpenConns = 8 })
	require.NoError(t, s.Migrate(context.Background()))
	return s
}

// find reads plant id under the deadline.
func find(s *Store, id domain.ID) (domain.Plant, bool, error) {
	type r struct {
		p  domain.Plant
		ok bool
	}
	got, err := within(func(ctx context.Context) (r, error) { p, ok, err := s.FindPlant(ctx, id); return r{p, ok}, err })
	return got.p, got.ok, err
}

// With the synchronous standby gone, a write is answered 503 at its
// deadline, and so is the same write sent again: a create's replay, a
// change that would change nothing, a delete that would find nothing each
// wait, unanswered, for the first one's commit, which waits, not visible,
// for the standby. Every read shows the state before. The primary then
// dies, the standby comes back with what it had and is promoted: what was
// shown is what the new primary has, and the writes answered 503 are not
// there.
func TestARetryNeverShowsAWriteTheStandbyDidNotConfirm(t *testing.T) {
	c := pgcluster.Start(t)
	s := openOnCluster(t, c)
	storeFerns(t, s, 1, 3)
	c.Standby.Kill()

	renamed, _ := domain.ParseName("renamed")
	rename := func(ctx context.Context) (domain.Plant, error) {
		return s.UpdatePlant(ctx, 1, func(p domain.Plant) (domain.Plant, error) { return p.WithName(renamed), nil })
	}
	create := func(ctx context.Context) (bool, error) {
		_, created, err := s.InsertIfAbsent(ctx, record(t, 2, "Fern", ""))
		return created, err
	}
	remove := func(ctx context.Context) (bool, error) { return s.DeletePlant(ctx, 3) }
	for attempt := range 2 {
		if _, err := within(create); !errors.Is(err, application.ErrUnavailable) {
			t.Fatalf("create without the standby, attempt %d: %v; want ErrUnavailable", attempt+1, err)
		}
		if _, err := within(rename); !errors.Is(err, application.ErrUnavailable) {
			t.Fatalf("change without the standby, attempt %d: %v; want ErrUnavailable", attempt+1, err)
		}
		if _, err := within(remove); !errors.Is(err, application.ErrUnavailable) {
			t.Fatalf("delete without the standby, attempt %d: %v; want ErrUnavailable", attempt+1, err)
		}
	}
	shown := map[domain.ID]string{}
	for _, id := range []domain.ID{1, 2, 3} {
		p, ok, err := find(s, id)
		require.NoError(t, err, "a read of what the standby has")
		if ok {
			shown[id] = p.Name().String()
		}
	}
	require.Equal(t, map[domain.ID]string{1: "Fern", 3: "Fern"}, shown, "reads without the standby")
	page, err := within(func(ctx context.Context) (application.EventPage, error) {
		return s.ReadEvents(ctx, application.FeedQuery{Limit: 100})
	})
	require.NoError(t, err)
	if page.Count != 2 {
		t.Errorf("the feed shows %d events without the standby: %s; want the two creates it has", page.Count, page.JSON)
	}

	c.Primary.Kill()
	c.Restart(t, c.Standby) // with what it had: the primary is gone
	c.Promote(t)
	require.Eventually(t, func() bool { _, _, err := find(s, 1); return err == nil }, time.Minute, 10*time.Millisecond,
		"the store never read from the promoted standby")
	for _, id := range []domain.ID{1, 2, 3} {
		p, ok, err := find(s, id)
		require.NoError(t, err)
		if name, was := shown[id]; ok != was || ok && p.Name().String() != name {
			t.Errorf("plant %d after the promotion: %v %q; shown before it: %v %q", id, ok, p.Name(), was, name)
		}
	}
}

// A session terminated while its commit waits for the standby leaves that
// commit visible on the primary, unconfirmed; so does a crash and restart
// of the primary. The store then shows nothing until a confirmation of its
// own covers it: reads are unavailable while the standby is gone, and show
// the plant once it is back and has it.
func TestAfterALostSessionNothingIsShownUntilConfirmed(t *testing.T) {
	for _, c := range []struct {
		name string
		lose func(t *testing.T, c *pgcluster.Cluster)
	}{
		{"terminated", func(t *testing.T, c *pgcluster.Cluster) { terminateWaitForTheStandby(t, c) }},
		{"primary restarted", func(t *testing.T, c *pgcluster.Cluster) { c.Primary.Kill(); c.Restart(t, c.Primary) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := pgcluster.Start(t)
			s := openOnCluster(t, cl)
			storeFerns(t, s, 1)
			cl.Standby.Kill()
			if _, err := within(func(ctx context.Context) (bool, error) {
				_, created, err := s.InsertIfAbsent(ctx, record(t, 2, "Fern", ""))
				return created, err
			}); !errors.Is(err, application.ErrUnavailable) {
				t.Fatalf("create without the standby: %v; want ErrUnavailable", err)
			}
			c.lose(t, cl)
			// The commit is on the primary, visible to anyone who asks.
			var n int
			require.Eventually(t, func() bool {
				return cl.DB(t, cl.Primary).QueryRow("SELECT count(*) FROM plants WHERE id = 2").Scan(&n) == nil && n == 1
			}, time.Minute, 10*time.Millisecond, "the unconfirmed commit never became visible on the primary")

			require.Eventually(t, func() bool {
				_, _, err := find(s, 1)
				return errors.Is(err, application.ErrUnavailable)
			}, time.Minute, 10*time.Millisecond, "the store answered reads after the loss, unconfirmed")
			for _, id := range []domain.ID{1, 2} {
				if _, _, err := find(s, id); !errors.Is(err, application.ErrUnavailable) {
					t.Fatalf("plant %d read before the standby confirmed it: %v; want ErrUnavailable", id, err)
				}
			}

			cl.Restart(t, cl.Standby)
			require.Eventually(t, func() bool { _, ok, err := find(s, 2); return err == nil && ok }, time.Minute, 10*time.Millisecond,
				"the plant never shown once the standby was back")
		})
	}
}

// terminateWaitForTheStandby terminates, as an administrator would, the
// backend of c's primary that waits for the synchronous standby.
func terminateWaitForTheStandby(t *testing.T, c *pgcluster.Cluster) {
	admin, err := sql.Open("postgres", c.Primary.URL())
	require.NoError(t, err)
	defer admin.Close()
	require.Eventually(t, func() bool {
		var n int
		err := admin.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`).Scan(&n)
		return err == nil && n > 0
	}, time.Minute, 10*time.Millisecond, "no backend waited for the standby")
}

// readToHead reads the feed after after, a page of 100 at a time, until a
// page is not full, and returns how many events it read and where to go on.
func readToHead(t *testing.T, s *Store, after application.FeedPosition, hasAfter bool) (int, application.FeedPosition) {
	t.Helper()
	read := 0
	for {
		page, err := within(func(ctx context.Context) (application.EventPage, error) {
			return s.ReadEvents(ctx, application.FeedQuery{After: after, HasAfter: hasAfter, Limit: 100, Retention: application.EventRetention(time.Hour)})
		})
		require.NoError(t, err)
		read, after, hasAfter = read+page.Count, page.Next, true
		if page.Count < 100 {
			return read, after
		}
	}
}

// A cursor handed out at the head of the feed keeps its place on a standby
// promoted after it: every event committed after it on the new primary
// follows it, though the old primary had handed out transaction ids that
// the standby never learnt (transactions of another database that wrote
// nothing the standby was sent before the crash), and the new primary
// hands those ids out again.
func TestAFeedCursorKeepsItsPlaceAcrossAPromotion(t *testing.T) {
	c := pgcluster.Start(t)
	s := openOnCluster(t, c)
	storeFerns(t, s, 1, 2, 3)
	read, cursor := readToHead(t, s, application.FeedPosition{}, false)
	require.Equal(t, 3, read)

	primary := c.DB(t, c.Primary)
	for _, stmt := range []string{"CREATE DATABASE burner", "ALTER SYSTEM SET wal_writer_delay = '10s'", "SELECT pg_reload_conf()"} {
		_, err := primary.Exec(stmt)
		require.NoError(t, err, stmt)
	}
	burner, err := sql.Open("postgres", c.Primary.URLOf("burner"))
	require.NoError(t, err)
	defer burner.Close()
	for range 200 {
		_, err := burner.Exec("SELECT pg_current_xact_id()")
		require.NoError(t, err)
	}
	read, cursor = readToHead(t, s, cursor, true)
	require.Zero(t, read)

	c.Primary.Kill()
	c.Promote(t)
	const created = 20
	for id := int64(10); id < 10+created; id++ {
		require.Eventually(t, func() bool {
			_, err := within(func(ctx context.Context) (bool, error) {
				_, ok, err := s.InsertIfAbsent(ctx, record(t, id, "Fern", ""))
				return ok, err
			})
			return err == nil
		}, time.Minute, 10*time.Millisecond, "plant %d never created on the promoted standby", id)
	}
	if read, _ = readToHead(t, s, cursor, true); read != created {
		t.Fatalf("from the cursor handed out before the promotion: %d events; want the %d creates since", read, created)
	}
}
