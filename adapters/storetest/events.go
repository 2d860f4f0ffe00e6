package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// feedEvent is one event of a page as a client decodes it.
type feedEvent struct {
	ID     string          `json:"id"`
	Type   string          `json:"type"`
	Number int64           `json:"number"`
	Time   time.Time       `json:"time"`
	Plant  json.RawMessage `json:"plant"`
}

// plantID is the id in the event's item.
func (e feedEvent) plantID(t *testing.T) domain.ID {
	t.Helper()
	var item struct{ ID int64 }
	if err := json.Unmarshal(e.Plant, &item); err != nil {
		t.Fatalf("event %s: plant %s: %v", e.ID, e.Plant, err)
	}
	return domain.ID(item.ID)
}

// keep is the retention of every read that is not about retention.
const keep = application.DefaultEventRetention

// horizonWait bounds how long a test waits for committed events to show:
// on PostgreSQL the feed shows an event once every transaction that began
// writing before it has ended, and other work on the same server (other
// tests) may hold that back for a moment.
const horizonWait = 30 * time.Second

// readEvents reads one page and decodes it, holding it to its count.
func readEvents(t *testing.T, s Store, q application.FeedQuery) ([]feedEvent, application.EventPage) {
	t.Helper()
	if q.Retention == 0 {
		q.Retention = keep
	}
	page, err := s.ReadEvents(context.Background(), q)
	if err != nil {
		t.Fatalf("ReadEvents(%+v): %v", q, err)
	}
	var events []feedEvent
	dec := json.NewDecoder(bytes.NewReader(page.JSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&events); err != nil || events == nil {
		t.Fatalf("ReadEvents(%+v) = %s, not a JSON array of events: %v", q, page.JSON, err)
	}
	if len(events) != page.Count || page.Count > q.Limit {
		t.Fatalf("ReadEvents(%+v) holds %d events and counts %d", q, len(events), page.Count)
	}
	return events, page
}

// walk reads the feed from after (its start, when nil) until a page that is
// not full, and returns the events and where the last page goes on from.
func walk(t *testing.T, s Store, after *application.FeedPosition, limit int) ([]feedEvent, application.FeedPosition) {
	t.Helper()
	q := application.FeedQuery{Limit: limit}
	if after != nil {
		q.After, q.HasAfter = *after, true
	}
	var all []feedEvent
	for {
		events, page := readEvents(t, s, q)
		all = append(all, events...)
		q.After, q.HasAfter = page.Next, true
		if page.Count < limit {
			return all, page.Next
		}
	}
}

// walkUntil walks from after again and again until it has read want
// events, and returns them and where to go on from.
func walkUntil(t *testing.T, s Store, after *application.FeedPosition, limit, want int) ([]feedEvent, application.FeedPosition) {
	t.Helper()
	var all []feedEvent
	deadline := time.Now().Add(horizonWait)
	for {
		events, next := walk(t, s, after, limit)
		all = append(all, events...)
		after = &next
		switch {
		case len(all) > want:
			t.Fatalf("the feed holds %d events, want %d: %s", len(all), want, describeEvents(all))
		case len(all) == want:
			return all, next
		case time.Now().After(deadline):
			t.Fatalf("the feed shows %d of %d events after %s: %s", len(all), want, horizonWait, describeEvents(all))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func describeEvents(events []feedEvent) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "\n  %s %s #%d %s", e.ID, e.Type, e.Number, e.Plant)
	}
	return b.String()
}

// wantEvent is what an event must say.
type wantEvent struct {
	typ   application.EventType
	plant domain.Plant
}

// checkEvents holds events to want, in order: each type and plant (the
// item byte for byte as the API renders it), ids unique, each plant's
// numbers increasing, times about now.
func checkEvents(t *testing.T, events []feedEvent, want []wantEvent, since time.Time) {
	t.Helper()
	if len(events) != len(want) {
		t.Fatalf("the feed holds %d events, want %d: %s", len(events), len(want), describeEvents(events))
	}
	ids := map[string]bool{}
	numbers := map[domain.ID]int64{}
	for i, e := range events {
		item := plantjson.AppendItem(nil, want[i].plant)
		if e.Type != string(want[i].typ) || !bytes.Equal(e.Plant, item) {
			t.Fatalf("event %d is %s %s, want %s %s: %s", i, e.Type, e.Plant, want[i].typ, item, describeEvents(events))
		}
		if ids[e.ID] || e.ID == "" {
			t.Fatalf("event %d has the id %q of another: %s", i, e.ID, describeEvents(events))
		}
		ids[e.ID] = true
		id := want[i].plant.ID()
		if last, ok := numbers[id]; ok && e.Number <= last {
			t.Fatalf("event %d of plant %d is numbered %d after %d: %s", i, id, e.Number, last, describeEvents(events))
		}
		numbers[id] = e.Number
		if e.Time.Before(since.Add(-time.Minute)) || e.Time.After(time.Now().Add(time.Minute)) {
			t.Fatalf("event %d was committed at %s, not about now", i, e.Time)
		}
	}
}

// Every write that stored, changed or removed a plant, by each port, is one
// event; a write that wrote nothing is none.
func recordsOneEventForEveryWrite(t *testing.T, h Harness) {
	s := h.Open(t)
	since := time.Now()
	_, start := walk(t, s, nil, 10)
	fern := plant(t, 300, "Fern", tag("green"))
	moss := plant(t, 300, "Moss", tag("green"))
	ivy := plant(t, 302, "Ivy", nil)
	mustInsert(t, s, fern)
	mustFind(t, s, fern, fern)                       // a replay
	mustFind(t, s, plant(t, 300, "Moss", nil), fern) // a conflict
	mustChange(t, s, 300, application.PlantChange{Name: ptrTo(moss.Name())}, nil, moss, true)
	mustChange(t, s, 300, application.PlantChange{}, nil, moss, true)                         // nothing to change
	mustChange(t, s, 300, application.PlantChange{Name: ptrTo(moss.Name())}, nil, moss, true) // the same value
	mustChange(t, s, 300, application.PlantChange{Tag: &domain.NoTag}, &fern, moss, false)    // a failed precondition
	var nf *domain.NotFoundError
	if _, err := s.UpdatePlant(context.Background(), 301, changeIf(application.PlantChange{}, nil, nil)); !errors.As(err, &nf) {
		t.Fatalf("UpdatePlant(301) = %v, want not found", err)
	}
	if _, err := s.DeletePlantIf(context.Background(), 300, deleteIf(fern, nil)); !errors.Is(err, application.ErrPreconditionFailed) {
		t.Fatalf("DeletePlantIf(300) expecting what is not stored = %v, want the precondition failed", err)
	}
	if _, err := s.DeletePlantIf(context.Background(), 301, deleteIf(fern, nil)); !errors.As(err, &nf) {
		t.Fatalf("DeletePlantIf(301) = %v, want not found", err)
	}
	mustDelete(t, s, 301, false)
	if got, err := s.DeletePlantIf(context.Background(), 300, deleteIf(moss, nil)); err != nil || got != moss {
		t.Fatalf("DeletePlantIf(300) = %s, %v; want %s deleted", describe(got), err, describe(moss))
	}
	mustInsert(t, s, fern) // the id is free again
	mustInsert(t, s, ivy)
	mustDelete(t, s, 300, true)
	want := []wantEvent{
		{application.PlantCreated, fern},
		{application.PlantChanged, moss},
		{application.PlantDeleted, moss},
		{application.PlantCreated, fern},
		{application.PlantCreated, ivy},
		{application.PlantDeleted, fern},
	}
	events, _ := walkUntil(t, s, &start, 4, len(want))
	checkEvents(t, events, want, since)
	if fromStart, _ := walk(t, s, nil, 1000); len(fromStart) != len(want) {
		t.Fatalf("the feed from its start holds %d events, want %d", len(fromStart), len(want))
	}
	if h.Reopen != nil {
		again, _ := walk(t, h.Reopen(t, s), &start, 1000)
		checkEvents(t, again, want, since)
		for i := range again {
			if again[i].ID != events[i].ID || again[i].Number != events[i].Number || !again[i].Time.Equal(events[i].Time) {
				t.Fatalf("another store reads event %d as %+v, not %+v", i, again[i], events[i])
			}
		}
	}
}

// Pages follow each other without a gap or a repeat, the last one is not
// full, and reading on from it returns what was committed since.
func pagesTheFeed(t *testing.T, h Harness) {
	s := h.Open(t)
	events, first := readEvents(t, s, application.FeedQuery{Limit: 10})
	if len(events) != 0 || string(first.JSON) != "[]" {
		t.Fatalf("a new store's feed is %s", first.JSON)
	}
	start := first.Next
	var want []wantEvent
	for i := range 25 {
		p := plant(t, int64(400+i), fmt.Sprintf("Plant %d", i), nil)
		mustInsert(t, s, p)
		want = append(want, wantEvent{application.PlantCreated, p})
	}
	walkUntil(t, s, &start, 1000, len(want))
	q := application.FeedQuery{After: start, HasAfter: true, Limit: 10}
	var all []feedEvent
	for _, size := range []int{10, 10, 5, 0, 0} {
		events, page := readEvents(t, s, q)
		if len(events) != size {
			t.Fatalf("page %d holds %d events, want %d", len(all)/10, len(events), size)
		}
		if size == 0 && string(page.JSON) != "[]" {
			t.Fatalf("an empty page is %s, want []", page.JSON)
		}
		all = append(all, events...)
		q.After = page.Next
	}
	checkEvents(t, all, want, time.Now().Add(-time.Minute))
	fromStart, _ := walk(t, s, nil, 7)
	if len(fromStart) != 25 || fromStart[0].ID != all[0].ID || fromStart[24].ID != all[24].ID {
		t.Fatalf("the feed from its start differs from the walk after an empty page: %s", describeEvents(fromStart))
	}
	// Reading on from the last page's position returns what was committed
	// since, and nothing of before.
	later := plant(t, 430, "Later", nil)
	mustInsert(t, s, later)
	mustDelete(t, s, 400, true)
	more, _ := walkUntil(t, s, &q.After, 10, 2)
	checkEvents(t, more, []wantEvent{{application.PlantCreated, later}, {application.PlantDeleted, want[0].plant}}, time.Now().Add(-time.Minute))
}

// Events older than the retention are pruned, a bounded number at a time;
// a position handed out longer ago than the retention, or followed by
// events pruned since, is expired; a position after them reads on.
func prunesOldEventsAndExpiresOldPositions(t *testing.T, h Harness) {
	s := h.Open(t)
	var want []wantEvent
	for i := range 5 {
		p := plant(t, int64(500+i), fmt.Sprintf("Plant %d", i), nil)
		mustInsert(t, s, p)
		want = append(want, wantEvent{application.PlantCreated, p})
	}
	walkUntil(t, s, nil, 1000, len(want))
	_, afterTwo := readEvents(t, s, application.FeedQuery{Limit: 2})
	_, afterThree := readEvents(t, s, application.FeedQuery{Limit: 3})

	prune := func(retention application.EventRetention, limit, want int) {
		t.Helper()
		n, err := s.PruneEvents(context.Background(), retention, limit)
		if err != nil || n != want {
			t.Fatalf("PruneEvents(%s, %d) = %d, %v; want %d removed", time.Duration(retention), limit, n, err, want)
		}
	}
	prune(application.EventRetention(time.Hour), 100, 0) // none is that old
	prune(0, 3, 3)                                       // bounded

	if _, err := s.ReadEvents(context.Background(), application.FeedQuery{After: afterTwo.Next, HasAfter: true, Limit: 10, Retention: keep}); !errors.Is(err, application.ErrFeedExpired) {
		t.Fatalf("ReadEvents after an event followed by pruned ones = %v, want ErrFeedExpired", err)
	}
	left, _ := walk(t, s, nil, 10)
	checkEvents(t, left, want[3:], time.Now().Add(-time.Minute))
	after, _ := walk(t, s, &afterThree.Next, 10)
	checkEvents(t, after, want[3:], time.Now().Add(-time.Minute))

	prune(0, 100, 2)
	prune(0, 100, 0)
	none, end := walk(t, s, nil, 10)
	if len(none) != 0 {
		t.Fatalf("the feed holds %s after every event was pruned", describeEvents(none))
	}
	// A position is as old as when it was handed out.
	if _, err := s.ReadEvents(context.Background(), application.FeedQuery{After: end, HasAfter: true, Limit: 10, Retention: keep}); err != nil {
		t.Fatalf("ReadEvents after a fresh position = %v", err)
	}
	old := end
	old.At = old.At.Add(-2 * time.Hour)
	if _, err := s.ReadEvents(context.Background(), application.FeedQuery{After: old, HasAfter: true, Limit: 10, Retention: application.EventRetention(time.Hour)}); !errors.Is(err, application.ErrFeedExpired) {
		t.Fatalf("ReadEvents after a position older than the retention = %v, want ErrFeedExpired", err)
	}
	// A reader that keeps polling an idle feed keeps a fresh position.
	mustInsert(t, s, plant(t, 510, "New", nil))
	if got, _ := walkUntil(t, s, &end, 10, 1); got[0].Type != string(application.PlantCreated) {
		t.Fatalf("read on after pruning: %s", describeEvents(got))
	}
}

// Writers on one store, and on a second one on the same database where the
// harness has one (another replica), create, change and delete a few
// plants at once, while two readers walk the feed to its end again and
// again. Each must see every acknowledged write exactly once, each
// plant's events in the order of its writes: created only when the plant
// was absent, changed and deleted only when present, a delete carrying the
// state the plant had, numbers increasing.
func seesEveryWriteOnceWhileWritersRace(t *testing.T, h Harness) {
	s := h.Open(t)
	stores := []Store{s}
	if h.Reopen != nil {
		stores = append(stores, h.Reopen(t, s))
	}
	_, start := walk(t, s, nil, 100)
	const (
		writers = 8
		ops     = 60
		plants  = 6
	)
	var (
		mu    sync.Mutex
		acked = raceWrites{created: map[string]bool{}, changed: map[string]bool{}, deleted: map[domain.ID]int{}}
		wg    sync.WaitGroup
	)
	for w := range writers {
		store := stores[w%len(stores)]
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for k := range ops {
				id := domain.ID(700 + rng.IntN(plants))
				name := fmt.Sprintf("w%d-%d", w, k)
				op := rng.IntN(4)
				var did bool
				var err error
				switch op {
				case 0:
					_, did, err = store.InsertIfAbsent(context.Background(), record(plant(t, int64(id), name, nil)))
				case 1:
					n, _ := domain.ParseName(name)
					_, err = store.UpdatePlant(context.Background(), id, changeIf(application.PlantChange{Name: &n}, nil, nil))
					did = err == nil
				case 2:
					did, err = store.DeletePlant(context.Background(), id)
				default:
					_, err = store.DeletePlantIf(context.Background(), id, func(domain.Plant) error { return nil })
					did = err == nil
				}
				if nf := (*domain.NotFoundError)(nil); errors.As(err, &nf) {
					err = nil
				}
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				if !did {
					continue
				}
				mu.Lock()
				acked.count++
				switch op {
				case 0:
					acked.created[name] = true
				case 1:
					acked.changed[name] = true
				default:
					acked.deleted[id]++
				}
				mu.Unlock()
			}
		})
	}
	// Two readers walk at once, with pages of different sizes, so that a
	// store that reads pages together serves both from shared queries.
	type reader struct {
		seen []feedEvent
		pos  application.FeedPosition
		page int
	}
	readers := []*reader{{pos: start, page: 5}, {pos: start, page: 3}}
	done := make(chan struct{})
	var walkers sync.WaitGroup
	for _, r := range readers {
		walkers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				events, next := walk(t, s, &r.pos, r.page)
				r.seen, r.pos = append(r.seen, events...), next
			}
		})
	}
	wg.Wait()
	close(done)
	walkers.Wait()
	if t.Failed() {
		return
	}
	// Each reader goes on from where it was when the writers stopped, until
	// every acknowledged write has shown, and not one more.
	for _, r := range readers {
		rest, _ := walkUntil(t, s, &r.pos, r.page, acked.count-len(r.seen))
		acked.check(t, append(r.seen, rest...))
	}
}

// raceWrites are the writes a race acknowledged.
type raceWrites struct {
	count            int
	created, changed map[string]bool // the names of creates and changes
	deleted          map[domain.ID]int
}

// check holds the events a reader saw to the acknowledged writes.
func (w raceWrites) check(t *testing.T, events []feedEvent) {
	t.Helper()
	var (
		ids     = map[string]bool{}
		stored  = map[domain.ID]json.RawMessage{} // each plant's item, nil when absent
		numbers = map[domain.ID]int64{}
		names   = map[string]bool{}
		deletes = map[domain.ID]int{}
	)
	for i, e := range events {
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("event %d (%s %s #%d %s): %s; the walk: %s", i, e.ID, e.Type, e.Number, e.Plant, fmt.Sprintf(format, args...), describeEvents(events))
		}
		if ids[e.ID] {
			fail("seen twice")
		}
		ids[e.ID] = true
		id := e.plantID(t)
		if last, ok := numbers[id]; ok && e.Number <= last {
			fail("numbered after %d, an earlier event of the plant", last)
		}
		numbers[id] = e.Number
		var item struct{ Name string }
		if err := json.Unmarshal(e.Plant, &item); err != nil {
			fail("%v", err)
		}
		switch application.EventType(e.Type) {
		case application.PlantCreated, application.PlantChanged:
			if (stored[id] == nil) != (e.Type == string(application.PlantCreated)) {
				fail("a %s while the plant was %s", e.Type, map[bool]string{true: "absent", false: "stored"}[stored[id] == nil])
			}
			acked := w.created
			if e.Type == string(application.PlantChanged) {
				acked = w.changed
			}
			if !acked[item.Name] || names[e.Type+item.Name] {
				fail("no acknowledged write, or one already seen, set the name %q", item.Name)
			}
			names[e.Type+item.Name] = true
			stored[id] = e.Plant
		case application.PlantDeleted:
			if !bytes.Equal(stored[id], e.Plant) {
				fail("deleted what was stored as %s", stored[id])
			}
			stored[id] = nil
			deletes[id]++
		default:
			fail("unknown type")
		}
	}
	if len(events) != w.count || len(names) != len(w.created)+len(w.changed) {
		t.Fatalf("%d events for %d acknowledged writes: %d of %d creates and changes seen", len(events), w.count, len(names), len(w.created)+len(w.changed))
	}
	for id, n := range w.deleted {
		if deletes[id] != n {
			t.Fatalf("plant %d: %d deletes acknowledged, %d seen", id, n, deletes[id])
		}
	}
}
