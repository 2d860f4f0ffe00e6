package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/domain"
)

// Two batches in flight at once (two writers of one service, or two
// replicas) may share ids, as when a client retries a create. If each took
// the ids' locks in the order its requests arrived, one could hold id a and
// wait for b while the other holds b and waits for a: PostgreSQL breaks such
// a deadlock only after deadlock_timeout (a second by default), holding both
// batches' clients for that long, then fails one statement, which the store
// runs again. Batches that take ids in one order wait for each other instead.
func TestConcurrentBatchesSharingIDsDoNotDeadlock(t *testing.T) {
	s, url := newStore(t)
	admin := pgtest.Admin(t)
	dbname := pgtest.DatabaseName(url)

	const n, middle = 200, 100
	ascending := make([]write, 0, n)
	for id := int64(1); id <= n; id++ {
		ascending = append(ascending, createWrite(record(t, id, "Fern", "")))
	}
	descending := make([]write, 0, n)
	for i := n - 1; i >= 0; i-- {
		descending = append(descending, ascending[i])
	}

	// A transaction of another client holds the middle id, so that both
	// batches are surely under way, each holding ids the other needs, when
	// it ends.
	release := holdInsert(t, url, middle)
	var wg sync.WaitGroup
	results := make([][]result, 2)
	for i, batch := range [][]write{ascending, descending} {
		wg.Go(func() { results[i] = s.flush(context.Background(), batch) })
	}
	waitForLockWaits(t, admin, dbname, 2)
	release()
	wg.Wait()

	for i, res := range results {
		inserted := 0
		for k, r := range res {
			if r.Err != nil && !errors.Is(r.Err, domain.ErrNotFound) { // the other batch may have deleted it first
				t.Fatalf("batch %d, write %d: %v", i, k, r.Err)
			}
			if r.Value.done {
				inserted++
			}
		}
		t.Logf("batch %d inserted %d of %d", i, inserted, n)
	}
	var stored int
	if err := s.db.Get(&stored, "SELECT count(*) FROM plants"); err != nil {
		t.Fatal(err)
	}
	if stored != n {
		t.Errorf("%d plants stored; want %d", stored, n)
	}
	if got := deadlocks(t, s, admin, dbname); got != 0 {
		t.Errorf("PostgreSQL detected %d deadlocks between the batches; want none", got)
	}
}

// holdInsert inserts a plant with id in a transaction of a connection of its
// own, and returns the function that rolls it back and closes the connection.
func holdInsert(t *testing.T, url string, id int64) (release func()) {
	t.Helper()
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO plants (id, name, created_by, created_at) VALUES ($1, 'Held', 'other', now())", id); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}

// deadlocks closes s, so that its sessions end and report their statistics,
// and returns the deadlocks PostgreSQL counted on database dbname.
func deadlocks(t *testing.T, s *Store, admin *sqlx.DB, dbname string) int {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A session reports its counts before it leaves pg_stat_activity.
	require.Eventually(t, func() bool {
		var sessions int
		err := admin.Get(&sessions, "SELECT count(*) FROM pg_stat_activity WHERE datname = $1", dbname)
		return err == nil && sessions == 0
	}, time.Minute, 10*time.Millisecond, "every session on %s ends", dbname)
	var n int
	if err := admin.Get(&n, "SELECT deadlocks FROM pg_stat_database WHERE datname = $1", dbname); err != nil {
		t.Fatal(err)
	}
	return n
}

// Batches of changes and deletes that share ids wait for each other
// instead of deadlocking. Were a delete and a change in one statement, its
// parts would take their locks one kind after the other: the first batch
// would hold 1 and want 2 for its change while the second held 2 and wanted
// 1. Each statement holds one kind of write that locks rows instead.
func TestConcurrentBatchesOfChangesAndDeletesDoNotDeadlock(t *testing.T) {
	s, url := newStore(t)
	admin := pgtest.Admin(t)
	dbname := pgtest.DatabaseName(url)
	storeFerns(t, s, 1, 2, 10, 11)
	first := []write{deleteWrite(1), deleteWrite(10), renameWrite(t, 2, "Moss", nil)}
	second := []write{deleteWrite(2), deleteWrite(11), renameWrite(t, 1, "Moss", nil)}

	// Another client holds 10 and 11, so that each batch has taken the
	// first id of its deletes when they wait.
	release := holdUpdate(t, url, 10, 11)
	var wg sync.WaitGroup
	results := make([][]result, 2)
	for i, batch := range [][]write{first, second} {
		wg.Go(func() { results[i] = s.flush(context.Background(), batch) })
	}
	waitForLockWaits(t, admin, dbname, 2)
	release()
	wg.Wait()
	for i, res := range results {
		for k, r := range res {
			if r.Err != nil && !errors.Is(r.Err, domain.ErrNotFound) { // the other batch may have deleted it first
				t.Fatalf("batch %d, write %d: %v", i, k, r.Err)
			}
		}
	}
	if got := deadlocks(t, s, admin, dbname); got != 0 {
		t.Errorf("PostgreSQL detected %d deadlocks between the batches; want none", got)
	}
}

// holdUpdate locks the rows of ids in a transaction of a connection of its
// own, and returns the function that rolls it back and closes the connection.
func holdUpdate(t *testing.T, url string, ids ...int64) (release func()) {
	t.Helper()
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := tx.Exec("UPDATE plants SET name = 'Held' WHERE id = $1", id); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}
