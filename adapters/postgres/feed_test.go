package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// feedEvent is one event of a page.
type feedEvent struct {
	Type   string          `json:"type"`
	Number int64           `json:"number"`
	Plant  json.RawMessage `json:"plant"`
}

// readFrom walks the feed from pos to a page that is not full, and returns
// its events and where to go on from.
func readFrom(t *testing.T, s *Store, pos *application.FeedPosition) ([]feedEvent, application.FeedPosition) {
	t.Helper()
	q := application.FeedQuery{Limit: 3, Retention: application.DefaultEventRetention}
	if pos != nil {
		q.After, q.HasAfter = *pos, true
	}
	var all []feedEvent
	for {
		page, err := s.ReadEvents(context.Background(), q)
		if err != nil {
			t.Fatalf("ReadEvents: %v", err)
		}
		var events []feedEvent
		if err := json.Unmarshal(page.JSON, &events); err != nil {
			t.Fatalf("%s: %v", page.JSON, err)
		}
		all = append(all, events...)
		q.After, q.HasAfter = page.Next, true
		if page.Count < q.Limit {
			return all, page.Next
		}
	}
}

// readUntil reads on from pos until want events have shown: other work on
// the server (other tests) may hold the horizon back for a moment.
func readUntil(t *testing.T, s *Store, pos application.FeedPosition, want int) []feedEvent {
	t.Helper()
	var all []feedEvent
	for deadline := time.Now().Add(30 * time.Second); len(all) < want; {
		var events []feedEvent
		events, pos = readFrom(t, s, &pos)
		all = append(all, events...)
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events after 30s: %+v", len(all), want, all)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(all) != want {
		t.Fatalf("%d events, want %d: %+v", len(all), want, all)
	}
	return all
}

// readUntilFrom reads from *pos (the feed's start when zero) until want
// events have shown, and moves *pos past them.
func readUntilFrom(t *testing.T, s *Store, pos *application.FeedPosition, want int) []feedEvent {
	t.Helper()
	var all []feedEvent
	from := (*application.FeedPosition)(nil)
	if *pos != (application.FeedPosition{}) {
		from = pos
	}
	for deadline := time.Now().Add(30 * time.Second); len(all) < want; time.Sleep(5 * time.Millisecond) {
		events, next := readFrom(t, s, from)
		all = append(all, events...)
		*pos, from = next, &next
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events after 30s: %+v", len(all), want, all)
		}
	}
	if len(all) != want {
		t.Fatalf("%d events, want %d: %+v", len(all), want, all)
	}
	return all
}

// connect opens a session of its own on url, as another client would.
func connect(t *testing.T, url string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Connect("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// A transaction that took its id before others and commits after them, as
// a slow writer's does, holds the feed back until it ends: a reader walking
// the feed meanwhile is handed no cursor past it, and so reads its event
// once it commits, first, then the others, none skipped.
func TestAnEventCommittedLateIsNotSkipped(t *testing.T) {
	s, url := newStore(t)
	ctx := context.Background()
	_, start := readFrom(t, s, nil)

	slow, err := connect(t, url).Beginx()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = slow.Rollback() }()
	late := `{"id":900,"name":"Late"}`
	if _, err := slow.Exec(insertEvent, "plant.created", late); err != nil {
		t.Fatal(err)
	}
	for id := range int64(5) {
		if _, _, err := s.InsertIfAbsent(ctx, record(t, id+1, "Fern", "")); err != nil {
			t.Fatal(err)
		}
	}
	// The five are committed, after the slow transaction took its id: the
	// reader walks past them again and again and is shown none.
	pos := start
	for range 3 {
		var events []feedEvent
		if events, pos = readFrom(t, s, &pos); len(events) != 0 {
			t.Fatalf("the feed showed %+v while an earlier transaction was open", events)
		}
	}
	if err := slow.Commit(); err != nil {
		t.Fatal(err)
	}
	events := readUntil(t, s, pos, 6)
	if string(events[0].Plant) != late {
		t.Fatalf("the first event is %s, want the one committed late: %+v", events[0].Plant, events)
	}
	for i, e := range events[1:] {
		if want := string(plantjson.AppendItem(nil, record(t, int64(i+1), "Fern", "").Plant)); string(e.Plant) != want {
			t.Fatalf("event %d is %s, want %s", i+1, e.Plant, want)
		}
	}
}

// A batch statement holds the lock of every plant it writes before it
// changes any row, and so before it has a transaction id: held up by an
// earlier writer of one of its plants, it waits without an id, and gets one
// only after that writer has ended.
func TestAWriteWaitsForItsPlantsBeforeItHasATransactionID(t *testing.T) {
	s, url := newStore(t)
	ctx := context.Background()
	holder, err := connect(t, url).Beginx()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback() }()
	if _, err := holder.Exec(`SELECT pg_advisory_xact_lock(7)`); err != nil {
		t.Fatal(err)
	}
	// One statement writes plant 3, which nothing holds, and plant 7.
	done := make(chan []result, 1)
	go func() {
		done <- s.flush(ctx, []write{createWrite(record(t, 3, "Fern", "")), createWrite(record(t, 7, "Moss", ""))})
	}()
	observer := connect(t, url)
	var waiting []struct {
		XID   *string `db:"backend_xid"`
		Query string  `db:"query"`
	}
	for deadline := time.Now().Add(10 * time.Second); len(waiting) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no session waits for the plant's lock")
		}
		if err := observer.Select(&waiting, `SELECT backend_xid::text AS backend_xid, query FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`); err != nil {
			t.Fatal(err)
		}
	}
	if w := waiting[0]; w.XID != nil || !strings.Contains(w.Query, "plant_events") {
		t.Fatalf("the batch waits for the plant's lock with a transaction id (%v): %s", w.XID != nil, w.Query)
	}
	var stored int
	if err := observer.Get(&stored, `SELECT count(*) FROM plants`); err != nil || stored != 0 {
		t.Fatalf("%d plants visible while the batch waits (%v)", stored, err)
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	for i, res := range <-done {
		if res.Err != nil || !res.Value.done {
			t.Fatalf("write %d: %+v", i, res)
		}
	}
}

// A plain delete of a plant stored without its item (before items were
// kept, or written around the service) is decided again in Go, so that its
// event carries the plant's state rendered by the service; a delete of an
// absent plant still finds nothing and yields no event.
func TestADeleteOfAPlantWithoutItsItemCarriesItsState(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	if _, _, err := s.InsertIfAbsent(ctx, record(t, 1, "Fern", "green")); err != nil {
		t.Fatal(err)
	}
	// The create's event first, so that start is past it: other work on the
	// server may hold the horizon back for a moment.
	var start application.FeedPosition
	readUntilFrom(t, s, &start, 1)
	if _, err := s.db.Exec(`UPDATE plants SET name = 'Pilea "P"', item = NULL WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id   domain.ID
		want bool
	}{{1, true}, {1, false}, {2, false}} {
		if deleted, err := s.DeletePlant(ctx, tt.id); err != nil || deleted != tt.want {
			t.Fatalf("DeletePlant(%d) = %v, %v; want %v", tt.id, deleted, err, tt.want)
		}
	}
	events := readUntil(t, s, start, 1)
	if want := `{"id":1,"name":"Pilea \"P\"","tag":"green"}`; events[0].Type != "plant.deleted" || string(events[0].Plant) != want {
		t.Fatalf("the delete's event is %s %s, want plant.deleted %s", events[0].Type, events[0].Plant, want)
	}
}

// A change or a conditional delete decided on a plant that was deleted and
// created again, by another replica, before the write reached it writes
// nothing to the new plant: it is decided again on it. Each incarnation of
// an id has versions of its own, so the write over the version it read
// cannot take the new plant for the old one.
func TestAWriteDecidedOnAnEarlierIncarnationIsDecidedAgain(t *testing.T) {
	s, url := newStore(t)
	other := openStore(t, url)
	ctx := context.Background()
	fern, moss := record(t, 1, "Fern", ""), record(t, 1, "Moss", "")
	recreate := func() {
		t.Helper()
		if deleted, err := other.DeletePlant(ctx, 1); err != nil || !deleted {
			t.Fatalf("DeletePlant on the other store = %v, %v", deleted, err)
		}
		if _, inserted, err := other.InsertIfAbsent(ctx, moss); err != nil || !inserted {
			t.Fatalf("InsertIfAbsent on the other store = %v, %v", inserted, err)
		}
	}
	if _, _, err := s.InsertIfAbsent(ctx, fern); err != nil {
		t.Fatal(err)
	}
	var saw []string
	got, err := s.UpdatePlant(ctx, 1, func(p domain.Plant) (domain.Plant, error) {
		saw = append(saw, p.Name().String())
		if len(saw) == 1 {
			recreate()
		}
		return p.WithTag(mustTag(t, "seen")), nil
	})
	if err != nil || strings.Join(saw, ",") != "Fern,Moss" || got.Name().String() != "Moss" {
		t.Fatalf("UpdatePlant across a re-create = %s, %v after seeing %v; want it decided again on Moss", got.Name(), err, saw)
	}

	if _, err := s.db.Exec(`UPDATE plants SET name = 'Fern', tag = NULL, item = NULL WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	saw = nil
	_, err = s.DeletePlantIf(ctx, 1, func(p domain.Plant) error {
		saw = append(saw, p.Name().String())
		if len(saw) == 1 {
			recreate()
		}
		if p.Name().String() != "Fern" {
			return application.ErrPreconditionFailed
		}
		return nil
	})
	if !errors.Is(err, application.ErrPreconditionFailed) || strings.Join(saw, ",") != "Fern,Moss" {
		t.Fatalf("DeletePlantIf expecting Fern across a re-create = %v after seeing %v; want it refused on Moss", err, saw)
	}
	if p, found, err := s.FindPlant(ctx, 1); err != nil || !found || p.Name().String() != "Moss" {
		t.Fatalf("after the refused delete: %v %v %v; want Moss stored", p.Name(), found, err)
	}
}
