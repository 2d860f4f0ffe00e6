package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
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
		if e.Time.Nanosecond()%1000 != 0 { // every store keeps times to the microsecond, as PostgreSQL does
			t.Fatalf("event %d was committed at %s: finer than a microsecond", i, e.Time.Format(time.RFC3339Nano))
		}
	}
}
