package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/application"
)

func TestBatchWithOneIDTwiceInsertsTheFirst(t *testing.T) {
	s, _ := newStore(t)
	first, second, other := record(t, 7, "Sage", ""), record(t, 7, "Thyme", "herb"), record(t, 8, "Mint", "")

	res := s.flush(context.Background(), []application.Record{first, second, first, other})
	want := []struct {
		plant    application.Record
		inserted bool
	}{{first, true}, {first, false}, {first, false}, {other, true}}
	for i, w := range want {
		if res[i].Err != nil || res[i].Value.inserted != w.inserted || !samePlant(res[i].Value.plant, w.plant.Plant) {
			t.Errorf("result %d = %+v; want %v, inserted %v", i, res[i], w.plant.Plant, w.inserted)
		}
	}
}

func TestBatchOnAnExistingIDAnswersTheStoredPlant(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	stored := record(t, 3, "Orchid", "")
	if _, _, err := s.InsertIfAbsent(ctx, stored); err != nil {
		t.Fatal(err)
	}
	res := s.flush(ctx, []application.Record{record(t, 3, "Tulip", ""), record(t, 3, "Orchid", "")})
	for i, r := range res {
		if r.Err != nil || r.Value.inserted || !samePlant(r.Value.plant, stored.Plant) {
			t.Errorf("result %d = %+v; want the stored plant, not inserted", i, r)
		}
	}
}

func TestRowRefusedByTheDatabaseFailsAlone(t *testing.T) {
	s, _ := newStore(t)
	// A constraint the domain does not know stands for any row-level refusal.
	if _, err := s.db.Exec("ALTER TABLE plants ADD CONSTRAINT no_poison CHECK (name <> 'Poison')"); err != nil {
		t.Fatal(err)
	}
	batch := []application.Record{record(t, 1, "Daisy", ""), record(t, 2, "Poison", ""), record(t, 3, "Lotus", ""), record(t, 2, "Poison", "")}

	res := s.flush(context.Background(), batch)
	for _, i := range []int{0, 2} {
		if res[i].Err != nil || !res[i].Value.inserted {
			t.Errorf("neighbour %d = %+v; want inserted", i, res[i])
		}
	}
	for _, i := range []int{1, 3} {
		err := res[i].Err
		if err == nil || errors.Is(err, application.ErrUnavailable) {
			t.Errorf("refused row %d = %+v; want a fault", i, res[i])
		}
		assertNoDriverError(t, err)
	}
}

// A row committed by another transaction after the batch statement took its
// snapshot stops the insert and is invisible to it; the store reads it back
// instead of failing.
func TestRowCommittedDuringTheStatementIsReadBack(t *testing.T) {
	s, url := newStore(t)
	other, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("INSERT INTO plants (id, name, created_by, created_at) VALUES (5, 'Rival', 'other', now())"); err != nil {
		t.Fatal(err)
	}

	done := make(chan []result, 1)
	go func() {
		done <- s.flush(context.Background(), []application.Record{record(t, 5, "Mine", ""), record(t, 6, "Free", "")})
	}()
	waitForLockWait(t, pgtest.Admin(t), pgtest.DatabaseName(url))
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if r := res[0]; r.Err != nil || r.Value.inserted || r.Value.plant.Name().String() != "Rival" {
		t.Errorf("contested id = %+v; want the rival's plant, not inserted", r)
	}
	if r := res[1]; r.Err != nil || !r.Value.inserted {
		t.Errorf("free id = %+v; want inserted", r)
	}
}

// waitForLockWait returns once a session on database dbname waits for a lock.
func waitForLockWait(t *testing.T, admin *sqlx.DB, dbname string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var waiting int
		err := admin.Get(&waiting, "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", dbname)
		if err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the batch statement never waited for the concurrent insert")
}
