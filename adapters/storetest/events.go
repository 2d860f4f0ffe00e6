package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

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
	// A position is as old as when it was handed out, finer than the
	// second: a retention of a few seconds must not expire a cursor that
	// looks up to a second older than it is. (The store's clock may not be
	// this test's, so the check is that the time is not cut to the second:
	// two positions both on a whole second are a chance of one in 10^12.)
	_, first := readEvents(t, s, application.FeedQuery{After: end, HasAfter: true, Limit: 10, Retention: keep})
	_, second := readEvents(t, s, application.FeedQuery{After: end, HasAfter: true, Limit: 10, Retention: keep})
	if first.Next.At.Nanosecond() == 0 && second.Next.At.Nanosecond() == 0 {
		t.Fatalf("positions handed out say %s and %s: cut to the second", first.Next.At.Format(time.RFC3339Nano), second.Next.At.Format(time.RFC3339Nano))
	}
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
