package sqlite

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestOneBatchSeesItsOwnEarlierRows(t *testing.T) {
	s := newStore(t)
	a := mustPlant(t, 7, "Basil", ptr("herb"))
	b := mustPlant(t, 7, "Thyme", ptr("herb"))
	c := mustPlant(t, 8, "Mint", nil)

	results := s.flush(context.Background(), creates(recordOf(a), recordOf(a), recordOf(b), recordOf(c)))

	want := []writeOutcome{{stored: a, done: true}, {stored: a}, {stored: a}, {stored: c, done: true}}
	for i, r := range results {
		if r.Err != nil || r.Value != want[i] {
			t.Errorf("create %d: %+v, %v; want %+v", i, r.Value, r.Err, want[i])
		}
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

func TestOneBatchAppliesWritesToOneIDInOrder(t *testing.T) {
	s := newStore(t)
	sage := mustPlant(t, 7, "Sage", nil)
	thyme := mustPlant(t, 7, "Thyme", ptr("herb"))
	mint := mustPlant(t, 8, "Mint", nil)

	results := s.flush(context.Background(), []write{
		createWrite(recordOf(sage)), deleteWrite(7), deleteWrite(7), createWrite(recordOf(thyme)),
		createWrite(recordOf(sage)), deleteWrite(8), createWrite(recordOf(mint)),
	})

	want := []writeOutcome{
		{stored: sage, done: true}, {done: true}, {}, {stored: thyme, done: true},
		{stored: thyme}, {}, {stored: mint, done: true},
	}
	for i, r := range results {
		if r.Err != nil || r.Value != want[i] {
			t.Errorf("write %d: %+v, %v; want %+v", i, r.Value, r.Err, want[i])
		}
	}
}

func TestABadStoredRowFailsOnlyItsOwnCreate(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	// A control character passes the schema's length check but not the
	// plant rules: the row must be reported, not served.
	if _, err := s.write.ExecContext(ctx,
		`INSERT INTO plants (id, name, tag, created_by, created_at) VALUES (1, 'bad'||char(7), NULL, 'sql', '')`); err != nil {
		t.Fatal(err)
	}
	bad := mustPlant(t, 1, "bad", nil)
	good := mustPlant(t, 2, "good", nil)

	results := s.flush(ctx, creates(recordOf(bad), recordOf(good)))

	if results[0].Err == nil || errors.Is(results[0].Err, application.ErrUnavailable) {
		t.Errorf("create over the bad row: %v, want a fault", results[0].Err)
	}
	if r := results[1]; r.Err != nil || r.Value != (writeOutcome{stored: good, done: true}) {
		t.Errorf("neighbour create: %+v, %v; want inserted", r.Value, r.Err)
	}
	stored, inserted, err := s.InsertIfAbsent(ctx, recordOf(good))
	if err != nil || inserted || stored != good {
		t.Errorf("neighbour not committed: %v, %v, %v", stored, inserted, err)
	}
}

func TestCloseFinishesWaitingCreates(t *testing.T) {
	s := newStore(t)
	entered, release := make(chan struct{}), make(chan struct{})
	first := true
	s.beforeFlush = func() {
		if first {
			first = false
			close(entered)
			<-release
		}
	}
	type outcome struct {
		inserted bool
		err      error
	}
	plants := []domain.Plant{mustPlant(t, 1, "One", nil), mustPlant(t, 2, "Two", nil), mustPlant(t, 3, "Three", nil)}
	outcomes := make([]chan outcome, len(plants))
	create := func(i int) {
		outcomes[i] = make(chan outcome, 1)
		go func() {
			_, inserted, err := s.InsertIfAbsent(context.Background(), recordOf(plants[i]))
			outcomes[i] <- outcome{inserted, err}
		}()
	}
	create(0)
	<-entered // the first batch is being written
	create(1)
	create(2)
	for s.batcher.Queued() < 2 { // the two others wait for the next batch
		runtime.Gosched()
	}

	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for !s.closing.Load() {
		runtime.Gosched()
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}

	// Close has answered every create; the goroutine that passes the answer
	// on may still have to be scheduled.
	for i, ch := range outcomes {
		select {
		case o := <-ch:
			if o.err != nil || !o.inserted {
				t.Errorf("create %d: inserted=%v, %v; want committed", i, o.inserted, o.err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("create %d still waiting after Close returned", i)
		}
	}
	if _, _, err := s.InsertIfAbsent(context.Background(), recordOf(mustPlant(t, 4, "Four", nil))); !errors.Is(err, application.ErrUnavailable) {
		t.Errorf("create after Close = %v, want ErrUnavailable", err)
	}
	if err := s.Ping(context.Background()); !errors.Is(err, application.ErrUnavailable) {
		t.Errorf("Ping after Close = %v, want ErrUnavailable", err)
	}

	again := openMigrated(t, s.path)
	for _, p := range plants {
		if stored, inserted, err := again.InsertIfAbsent(context.Background(), recordOf(p)); err != nil || inserted || stored != p {
			t.Errorf("plant %d not durable: %v, %v, %v", p.ID(), stored, inserted, err)
		}
	}
}

// Writes of every kind to one id in one batch take effect in batch order:
// each update and check sees what the writes before it left.
func TestOneBatchAppliesEveryKindOfWriteInOrder(t *testing.T) {
	s := newStore(t)
	sage, mint := mustPlant(t, 7, "Sage", nil), mustPlant(t, 8, "Mint", nil)
	thyme := mustPlant(t, 7, "Thyme", nil)
	rename := func(id domain.ID, to domain.Plant, expect *domain.Plant) write {
		return updateWrite(id, func(stored domain.Plant) (domain.Plant, error) {
			if expect != nil && stored != *expect {
				return domain.Plant{}, application.ErrPreconditionFailed
			}
			return stored.WithName(to.Name()), nil
		})
	}
	deleteIf := func(id domain.ID, expect domain.Plant) write {
		return write{kind: &deleteIfKind, id: id, arg: application.Check(func(stored domain.Plant) error {
			if stored != expect {
				return application.ErrPreconditionFailed
			}
			return nil
		})}
	}
	results := s.flush(context.Background(), []write{
		createWrite(recordOf(sage)), createWrite(recordOf(mint)),
		rename(7, thyme, nil),
		rename(7, mint, &sage), // Sage is gone: refused
		rename(7, thyme, nil),  // no change: nothing written
		deleteIf(7, sage),      // refused
		deleteIf(7, thyme),
		rename(7, sage, nil), // nothing stored
		createWrite(recordOf(sage)), deleteWrite(8),
	})
	refused := application.ErrPreconditionFailed
	want := []writeOutcome{
		{stored: sage, done: true}, {stored: mint, done: true},
		{stored: thyme, done: true}, {stored: thyme, refused: refused}, {stored: thyme},
		{stored: thyme, refused: refused}, {stored: thyme, done: true}, {absent: true},
		{stored: sage, done: true}, {done: true},
	}
	for i, r := range results {
		if r.Err != want[i].refused || r.Value != want[i] {
			t.Errorf("write %d: %+v, %v; want %+v", i, r.Value, r.Err, want[i])
		}
	}
	if got, found, err := s.FindPlant(context.Background(), 7); err != nil || !found || got != sage {
		t.Errorf("after the batch: %v, %v, %v; want %v", got, found, err, sage)
	}
}

// updateWrite is the update of the plant stored under id by fn.
func updateWrite(id domain.ID, fn application.Update) write {
	return write{kind: &updateKind, id: id, arg: fn}
}

// An update that panics fails its own write, and the batch goes on: the
// single writer must not end with it.
func TestAPanickingUpdateFailsOnlyItself(t *testing.T) {
	s := newStore(t)
	sage := mustPlant(t, 7, "Sage", nil)
	results := s.flush(context.Background(), []write{
		createWrite(recordOf(sage)),
		updateWrite(7, func(domain.Plant) (domain.Plant, error) { panic("a fault in the use case") }),
		createWrite(recordOf(mustPlant(t, 8, "Mint", nil))),
	})
	if results[1].Err == nil || results[0].Err != nil || results[2].Err != nil {
		t.Fatalf("results %+v; want only the panicking update failed", results)
	}
	if got, err := s.UpdatePlant(context.Background(), 7, func(p domain.Plant) (domain.Plant, error) { return p, nil }); err != nil || got != sage {
		t.Errorf("after the panic: %v, %v; want the store writing on", got, err)
	}
}
