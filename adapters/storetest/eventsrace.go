package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

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
