package postgres

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestBatchWithOneIDTwiceInsertsTheFirst(t *testing.T) {
	s, _ := newStore(t)
	first, second, other := record(t, 7, "Sage", ""), record(t, 7, "Thyme", "herb"), record(t, 8, "Mint", "")

	res := s.flush(context.Background(), creates(first, second, first, other))
	want := []struct {
		plant    application.Record
		inserted bool
	}{{first, true}, {first, false}, {first, false}, {other, true}}
	for i, w := range want {
		if res[i].Err != nil || res[i].Value.done != w.inserted || !samePlant(res[i].Value.plant, w.plant.Plant) {
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
	res := s.flush(ctx, creates(record(t, 3, "Tulip", ""), record(t, 3, "Orchid", "")))
	for i, r := range res {
		if r.Err != nil || r.Value.done || !samePlant(r.Value.plant, stored.Plant) {
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
	batch := creates(record(t, 1, "Daisy", ""), record(t, 2, "Poison", ""), record(t, 3, "Lotus", ""), record(t, 2, "Poison", ""))
	batch = append(batch, deleteWrite(9))

	res := s.flush(context.Background(), batch)
	if res[4].Err != nil || res[4].Value.done {
		t.Errorf("delete beside the refused row = %+v; want not found, no error", res[4])
	}
	for _, i := range []int{0, 2} {
		if res[i].Err != nil || !res[i].Value.done {
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
		done <- s.flush(context.Background(), creates(record(t, 5, "Mine", ""), record(t, 6, "Free", "")))
	}()
	waitForLockWaits(t, pgtest.Admin(t), pgtest.DatabaseName(url), 1)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if r := res[0]; r.Err != nil || r.Value.done || r.Value.plant.Name().String() != "Rival" {
		t.Errorf("contested id = %+v; want the rival's plant, not inserted", r)
	}
	if r := res[1]; r.Err != nil || !r.Value.done {
		t.Errorf("free id = %+v; want inserted", r)
	}
}

// creates is a batch of creates.
func creates(recs ...application.Record) []write {
	ws := make([]write, len(recs))
	for i, rec := range recs {
		ws[i] = createWrite(rec)
	}
	return ws
}

// A create and a delete of one id in one batch take effect in batch order:
// the batch is cut into statements committed one after the other.
func TestBatchKeepsTheOrderOfWritesToOneID(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	sage, thyme := record(t, 7, "Sage", ""), record(t, 7, "Thyme", "herb")
	res := s.flush(ctx, []write{
		createWrite(sage), deleteWrite(7), deleteWrite(7), createWrite(thyme), createWrite(sage),
		deleteWrite(8), createWrite(record(t, 8, "Mint", "")),
	})
	want := []outcome{
		{plant: sage.Plant, done: true}, {done: true}, {}, {plant: thyme.Plant, done: true}, {plant: thyme.Plant},
		{}, {plant: record(t, 8, "Mint", "").Plant, done: true},
	}
	for i, w := range want {
		got := res[i].Value
		if res[i].Err != nil || got != w {
			t.Errorf("write %d = %+v, %v; want %+v", i, got, res[i].Err, w)
		}
	}
	if p, _, _ := s.InsertIfAbsent(ctx, record(t, 7, "Probe", "")); !samePlant(p, thyme.Plant) {
		t.Fatalf("id 7 holds %v after the batch; want the last create's plant", p)
	}
}

func TestSegmentsCutOnlyWhereAnIDChangesKind(t *testing.T) {
	c := func(id int64) write { return createWrite(application.Record{Plant: plantOf(t, id)}) }
	d := func(id int64) write { return deleteWrite(domain.ID(id)) }
	ch := func(id int64) write { return renameWrite(t, domain.ID(id), "p", nil) }
	tests := []struct {
		name  string
		batch []write
		want  [][]int
	}{
		{"creates only", []write{c(1), c(2), c(1)}, [][]int{{0, 1, 2}}},
		{"deletes only", []write{d(1), d(1), d(2)}, [][]int{{0, 1, 2}}},
		{"different ids mix", []write{c(1), d(2), c(3), d(4)}, [][]int{{0, 1, 2, 3}}},
		{"create then delete", []write{c(1), c(2), d(1), d(3)}, [][]int{{0, 1}, {2, 3}}},
		{"back and forth", []write{d(5), c(5), d(5), c(6)}, [][]int{{0}, {1}, {2, 3}}},
		{"updates of one id share, in order", []write{ch(1), ch(1), ch(2), c(3)}, [][]int{{0, 1, 2, 3}}},
		{"creates beside one locking kind", []write{c(1), ch(2), c(3), ch(4)}, [][]int{{0, 1, 2, 3}}},
		{"one locking kind at a time", []write{c(1), ch(2), d(3), c(4), d(5), ch(6)}, [][]int{{0, 1}, {2, 3, 4}, {5}}},
		{"change between create and delete", []write{c(1), ch(1), d(1)}, [][]int{{0}, {1}, {2}}},
	}
	for _, tt := range tests {
		if got := segments(tt.batch); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: segments = %v; want %v", tt.name, got, tt.want)
		}
	}
}

func plantOf(t *testing.T, id int64) domain.Plant { return record(t, id, "p", "").Plant }

// waitForLockWaits returns once n sessions on database dbname wait for a lock.
func waitForLockWaits(t *testing.T, admin *sqlx.DB, dbname string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		var waiting int
		err := admin.Get(&waiting, "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", dbname)
		return err == nil && waiting >= n
	}, time.Minute, 10*time.Millisecond, "%d batch statements wait for a concurrent insert", n)
}

// renameWrite is an update of id's name, when the stored plant is expect
// (any, when expect is nil).
func renameWrite(t *testing.T, id domain.ID, name string, expect *domain.Plant) write {
	t.Helper()
	n, err := domain.ParseName(name)
	if err != nil {
		t.Fatal(err)
	}
	return write{kind: &updateKind, id: id, arg: updating{update: func(stored domain.Plant) (domain.Plant, error) {
		if expect != nil && stored != *expect {
			return domain.Plant{}, application.ErrPreconditionFailed
		}
		return stored.WithName(n), nil
	}}}
}

// deleteIfWrite is a delete of id when the stored plant is expect.
func deleteIfWrite(id domain.ID, expect domain.Plant) write {
	return write{kind: &updateKind, id: id, arg: updating{check: func(stored domain.Plant) error {
		if stored != expect {
			return application.ErrPreconditionFailed
		}
		return nil
	}}}
}

// Writes of every kind to one id in one batch take effect in batch order,
// beside writes to other ids.
func TestBatchKeepsTheOrderOfEveryKindOfWrite(t *testing.T) {
	s, _ := newStore(t)
	sage, mint := record(t, 7, "Sage", ""), record(t, 8, "Mint", "")
	thyme := record(t, 7, "Thyme", "").Plant
	res := s.flush(context.Background(), []write{
		createWrite(sage), createWrite(mint),
		renameWrite(t, 7, "Thyme", nil),
		renameWrite(t, 7, "Basil", &sage.Plant), // Sage is gone: refused
		renameWrite(t, 8, "Mint", &mint.Plant),
		deleteIfWrite(7, thyme),
		renameWrite(t, 7, "Dill", nil), // nothing stored
		createWrite(sage), deleteWrite(8),
	})
	want := []struct {
		outcome
		err error
	}{
		{outcome{plant: sage.Plant, done: true}, nil}, {outcome{plant: mint.Plant, done: true}, nil},
		{outcome{plant: thyme, done: true}, nil},
		{outcome{}, application.ErrPreconditionFailed},
		{outcome{plant: mint.Plant, done: true}, nil},
		{outcome{plant: thyme, done: true}, nil},
		{outcome{}, domain.ErrNotFound},
		{outcome{plant: sage.Plant, done: true}, nil}, {outcome{done: true}, nil},
	}
	for i, w := range want {
		if got := res[i].Value; !errors.Is(res[i].Err, w.err) || (w.err == nil && got != w.outcome) {
			t.Errorf("write %d = %+v, %v; want %+v, %v", i, got, res[i].Err, w.outcome, w.err)
		}
	}
}

// One batch applies writes of every kind to different ids: the creates in
// the statement of the first kind that locks rows, each other such kind in
// a statement of its own.
func TestOneBatchAppliesEveryKind(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	two, three, four := record(t, 2, "Two", ""), record(t, 3, "Three", "x"), record(t, 4, "Four", "")
	for _, r := range []application.Record{two, three, four} {
		if _, _, err := s.InsertIfAbsent(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	batch := []write{createWrite(record(t, 1, "One", "")), deleteWrite(2), renameWrite(t, 3, "Moss", &three.Plant), deleteIfWrite(4, four.Plant)}
	if segs := segments(batch); !reflect.DeepEqual(segs, [][]int{{0, 1}, {2, 3}}) {
		t.Fatalf("segments %v; want the create with the delete, then the updates", segs)
	}
	res := s.flush(ctx, batch)
	want := []outcome{{plant: record(t, 1, "One", "").Plant, done: true}, {done: true}, {plant: record(t, 3, "Moss", "x").Plant, done: true}, {plant: four.Plant, done: true}}
	for i, w := range want {
		if res[i].Err != nil || res[i].Value != w {
			t.Errorf("write %d = %+v, %v; want %+v", i, res[i].Value, res[i].Err, w)
		}
	}
}
