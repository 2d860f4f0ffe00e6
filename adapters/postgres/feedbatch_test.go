package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// Updates of one plant decided together, in one batch, are one write of
// the row but each its own event, in order: even two changes that bring the
// plant back to what it was are two events, and a delete after them a third.
func TestUpdatesInOneBatchEachHaveTheirEvent(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	fern := record(t, 1, "Fern", "")
	if _, _, err := s.InsertIfAbsent(ctx, fern); err != nil {
		t.Fatal(err)
	}
	var start application.FeedPosition
	readUntilFrom(t, s, &start, 1) // past the create's event
	rename := func(name string) write {
		return write{kind: &updateKind, id: 1, arg: updating{update: func(p domain.Plant) (domain.Plant, error) {
			return p.WithName(mustName(t, name)), nil
		}}}
	}
	for i, res := range s.flush(ctx, []write{rename("Moss"), rename("Moss"), rename("Fern")}) {
		if res.Err != nil || !res.Value.done {
			t.Fatalf("update %d: %+v", i, res)
		}
	}
	for i, res := range s.flush(ctx, []write{rename("Ivy"), {kind: &updateKind, id: 1, arg: updating{check: allowAny}}}) {
		if res.Err != nil || !res.Value.done {
			t.Fatalf("write %d of the second batch: %+v", i, res)
		}
	}
	events := readUntil(t, s, start, 4)
	var got []string
	for _, e := range events {
		got = append(got, e.Type+" "+string(e.Plant))
	}
	want := []string{`plant.changed {"id":1,"name":"Moss"}`, `plant.changed {"id":1,"name":"Fern"}`,
		`plant.changed {"id":1,"name":"Ivy"}`, `plant.deleted {"id":1,"name":"Ivy"}`}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := 1; i < len(events); i++ {
		if events[i].Number <= events[i-1].Number {
			t.Fatalf("event %d numbered %d after %d", i, events[i].Number, events[i-1].Number)
		}
	}
}

// Pages read at the same time share one query: each reader gets the page
// that follows its own position, of its own size, and a reader past the
// retention is refused alone.
func TestPagesReadTogetherAreEachTheirReadersOwn(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	storeFerns(t, s, 1, 2, 3, 4, 5)
	var end application.FeedPosition
	readUntilFrom(t, s, &end, 5)
	// after[k] is the position after the feed's first k events.
	after := []application.FeedPosition{{}}
	for q := (application.FeedQuery{Limit: 1, Retention: application.DefaultEventRetention}); len(after) <= 5; q.After, q.HasAfter = after[len(after)-1], true {
		page, err := s.ReadEvents(ctx, q)
		if err != nil || page.Count != 1 {
			t.Fatalf("page %d: %d events, %v", len(after), page.Count, err)
		}
		after = append(after, page.Next)
	}
	stale := after[1]
	stale.At = stale.At.Add(-2 * time.Hour)
	qs := []application.FeedQuery{
		{Limit: 2},
		{After: after[1], HasAfter: true, Limit: 2},
		{After: after[3], HasAfter: true, Limit: 100},
		{After: stale, HasAfter: true, Limit: 2},
		{After: after[1], HasAfter: true, Limit: 1},
	}
	for i := range qs {
		qs[i].Retention = application.EventRetention(time.Hour)
	}
	wantNumbers := [][]int64{{1, 2}, {2, 3}, {4, 5}, nil, {2}} // indexes into the feed, from 1
	var feed []feedEvent
	if err := json.Unmarshal(mustPage(t, s, application.FeedQuery{Limit: 5, Retention: application.DefaultEventRetention}).JSON, &feed); err != nil {
		t.Fatal(err)
	}
	for i, res := range s.feedBatch(ctx, qs) {
		if wantNumbers[i] == nil {
			if !errors.Is(res.Err, application.ErrFeedExpired) {
				t.Errorf("reader %d, past the retention: %v, want ErrFeedExpired", i, res.Err)
			}
			continue
		}
		if res.Err != nil {
			t.Fatalf("reader %d: %v", i, res.Err)
		}
		var got []feedEvent
		if err := json.Unmarshal(res.Value.JSON, &got); err != nil {
			t.Fatalf("reader %d: %s: %v", i, res.Value.JSON, err)
		}
		var want []feedEvent
		for _, k := range wantNumbers[i] {
			want = append(want, feed[k-1])
		}
		if len(got) != len(want) || len(got) != res.Value.Count {
			t.Fatalf("reader %d: %d events (count %d), want %d", i, len(got), res.Value.Count, len(want))
		}
		for k := range got {
			if got[k].Number != want[k].Number || got[k].Type != want[k].Type || string(got[k].Plant) != string(want[k].Plant) {
				t.Errorf("reader %d, event %d: %+v, want %+v", i, k, got[k], want[k])
			}
		}
		if last := wantNumbers[i][len(wantNumbers[i])-1]; res.Value.Count == qs[i].Limit && res.Value.Next.Number != after[last].Number {
			t.Errorf("reader %d: next %+v, want %+v", i, res.Value.Next, after[last])
		}
	}
}

// mustPage reads one page of the feed.
func mustPage(t *testing.T, s *Store, q application.FeedQuery) application.EventPage {
	t.Helper()
	page, err := s.ReadEvents(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return page
}
