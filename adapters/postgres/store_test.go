package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestInsertIfAbsentStoresThenReplays(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	first := record(t, 1, "Monstera", "tropical")

	got, inserted, err := s.InsertIfAbsent(ctx, first)
	if err != nil || !inserted || !samePlant(got, first.Plant) {
		t.Fatalf("first create = %v, %v, %v; want the plant, inserted", got, inserted, err)
	}
	other := record(t, 1, "Ficus", "")
	got, inserted, err = s.InsertIfAbsent(ctx, other)
	if err != nil || inserted || !samePlant(got, first.Plant) {
		t.Fatalf("second create = %v, %v, %v; want the first plant, not inserted", got, inserted, err)
	}
}

func TestRaceOnOneIDHasOneWinner(t *testing.T) {
	s, _ := newStore(t)
	contents := []application.Record{record(t, 42, "Aloe", "succulent"), record(t, 42, "Basil", "")}
	const n = 64
	type answer struct {
		rec      application.Record
		inserted bool
		stored   any
		err      error
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			rec := contents[i%2]
			got, inserted, err := s.InsertIfAbsent(context.Background(), rec)
			answers[i] = answer{rec: rec, inserted: inserted, stored: got, err: err}
		})
	}
	close(start)
	wg.Wait()

	winners := 0
	var winner application.Record
	for _, a := range answers {
		if a.err != nil {
			t.Fatalf("create failed: %v", a.err)
		}
		if a.inserted {
			winners++
			winner = a.rec
		}
	}
	if winners != 1 {
		t.Fatalf("%d creates say they inserted; want exactly 1", winners)
	}
	for _, a := range answers {
		if a.stored != winner.Plant {
			t.Fatalf("a create saw %v; want the winner %v", a.stored, winner.Plant)
		}
	}
}

func TestAcknowledgedPlantIsVisibleToAnotherConnection(t *testing.T) {
	s, url := newStore(t)
	rec := record(t, -9, "Fern", "shade")
	if _, _, err := s.InsertIfAbsent(context.Background(), rec); err != nil {
		t.Fatal(err)
	}

	other, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var row struct {
		Name      string  `db:"name"`
		Tag       *string `db:"tag"`
		CreatedBy string  `db:"created_by"`
		CreatedAt string  `db:"created_at"`
	}
	err = other.Get(&row, `SELECT name, tag, created_by, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_at FROM plants WHERE id = -9`)
	if err != nil {
		t.Fatalf("the acknowledged plant is not visible: %v", err)
	}
	if row.Name != "Fern" || row.Tag == nil || *row.Tag != "shade" || row.CreatedBy != "tester" ||
		row.CreatedAt != "2026-11-22T10:00:00.123456" {
		t.Fatalf("stored row = %+v", row)
	}
}

func TestCloseCommitsWhatItAcceptedThenRefuses(t *testing.T) {
	s, url := newStore(t)
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, _, errs[i] = s.InsertIfAbsent(context.Background(), record(t, int64(i), "Ivy", ""))
		})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	other, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for i, err := range errs {
		var stored int
		if qerr := other.Get(&stored, "SELECT count(*) FROM plants WHERE id = $1", i); qerr != nil {
			t.Fatal(qerr)
		}
		switch {
		case err == nil && stored != 1:
			t.Fatalf("create %d was acknowledged but is not stored", i)
		case err != nil && !errors.Is(err, application.ErrUnavailable):
			t.Fatalf("create %d during Close = %v; want success or ErrUnavailable", i, err)
		}
	}
	if _, _, err := s.InsertIfAbsent(context.Background(), record(t, n, "Late", "")); !errors.Is(err, application.ErrUnavailable) {
		t.Fatalf("create after Close = %v; want ErrUnavailable", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCanceledCallerGetsCanceled(t *testing.T) {
	s, _ := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := s.InsertIfAbsent(ctx, record(t, 1, "Cactus", ""))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("create with a canceled context = %v; want context.Canceled", err)
	}
}

// A change writes the plant's new state and item and keeps the create's
// record, which the change's read of the row does not carry.
func TestAChangeKeepsTheCreatesRecord(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	rec := record(t, 3, "Fern", "shade")
	if _, _, err := s.InsertIfAbsent(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePlant(ctx, 3, func(p domain.Plant) (domain.Plant, error) { return p.WithName(mustName(t, "Moss")), nil }); err != nil {
		t.Fatal(err)
	}
	var row struct {
		Name      string    `db:"name"`
		Item      string    `db:"item"`
		CreatedBy string    `db:"created_by"`
		CreatedAt time.Time `db:"created_at"`
	}
	if err := s.db.Get(&row, `SELECT name, item, created_by, created_at FROM plants WHERE id = 3`); err != nil {
		t.Fatal(err)
	}
	if row.Name != "Moss" || row.Item != `{"id":3,"name":"Moss","tag":"shade"}` || row.CreatedBy != rec.CreatedBy ||
		!row.CreatedAt.Equal(rec.CreatedAt.Truncate(time.Microsecond)) {
		t.Fatalf("changed row = %+v; want Moss with its item, created by %s at %s", row, rec.CreatedBy, rec.CreatedAt)
	}
}
