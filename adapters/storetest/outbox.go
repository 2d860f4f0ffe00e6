package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

var receivers = []string{"http://a.example/hook", "https://b.example/plants?x=1"}

// openOutbox opens a store with an outbox, or skips where the adapter has none.
func openOutbox(t *testing.T, h Harness, receivers []string) OutboxStore {
	t.Helper()
	if h.OpenOutbox == nil {
		t.Skip("the harness opens no store with an outbox")
	}
	return h.OpenOutbox(t, receivers)
}

func listAll(t *testing.T, s OutboxStore, failed bool) []application.EventStatus {
	t.Helper()
	events, err := s.ListEvents(context.Background(), failed, 10000)
	if err != nil {
		t.Fatalf("ListEvents: %v", err)
	}
	return events
}

func announcesEveryStoredPlantToEveryReceiver(t *testing.T, h Harness) {
	s := openOutbox(t, h, receivers)
	if got := s.Receivers(); !slices.Equal(got, receivers) {
		t.Fatalf("Receivers() = %v; want %v", got, receivers)
	}
	stored := []domain.Plant{plant(t, 1, "Fern", tag("shade")), plant(t, -2, "Moss é", nil), plant(t, 3, "Ivy", nil)}
	for _, p := range stored {
		mustInsert(t, s, p)
	}
	mustFind(t, s, stored[0], stored[0])                 // a replay stores nothing
	mustFind(t, s, plant(t, 1, "Other", nil), stored[0]) // nor does a conflict
	mustDelete(t, s, 3, true)                            // nor withdraws a delete
	select {
	case <-s.Committed():
	case <-time.After(5 * time.Second):
		t.Fatal("no signal after a create stored events")
	}
	events := listAll(t, s, false)
	if len(events) != len(stored)*len(receivers) {
		t.Fatalf("%d events; want one per plant and receiver", len(events))
	}
	ids := map[string]bool{}
	for _, p := range stored {
		var urls []string
		for _, e := range events {
			if e.PlantID == p.ID() {
				if string(e.Item) != string(plantjson.AppendItem(nil, p)) || e.Attempts != 0 || e.CreatedAt.IsZero() || !e.RetryFrom.Equal(e.CreatedAt) || ids[e.ID] {
					t.Errorf("event %+v for %s", e, describe(p))
				}
				ids[e.ID] = true
				urls = append(urls, e.URL)
			}
		}
		slices.Sort(urls)
		if !slices.Equal(urls, receivers) {
			t.Errorf("plant %d announced to %v; want %v", p.ID(), urls, receivers)
		}
	}
	pending, oldest, failed, err := s.OutboxStats(context.Background())
	if err != nil || pending != 6 || failed != 0 || oldest.IsZero() {
		t.Fatalf("stats: %d pending since %s, %d failed, %v", pending, oldest, failed, err)
	}
}

func keepsNoEventsWithoutReceivers(t *testing.T, h Harness) {
	s := openOutbox(t, h, nil)
	mustInsert(t, s, plant(t, 1, "Fern", nil))
	if events := listAll(t, s, false); len(events) != 0 {
		t.Fatalf("%d events without receivers", len(events))
	}
}

func redeliversFailedEvents(t *testing.T, h Harness) {
	s := openOutbox(t, h, receivers[:1])
	mustInsert(t, s, plant(t, 1, "Fern", nil))
	mustInsert(t, s, plant(t, 2, "Moss", nil))
	now := time.Now().Add(time.Second).Truncate(time.Microsecond) // stores keep microseconds
	c := claim(t, s, now, 2)
	var outcomes []application.Settlement
	for _, e := range c {
		outcomes = append(outcomes, application.Settlement{ID: e.ID, Claim: e.Claim, Failed: true, RetryAt: now, Error: "gone"})
	}
	if err := s.Settle(context.Background(), outcomes); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Hour)
	if n, err := s.Redeliver(context.Background(), later, []string{c[0].ID}); n != 1 || err != nil {
		t.Fatalf("Redeliver one: %d, %v", n, err)
	}
	got := claim(t, s, later, 10)
	if len(got) != 1 || got[0].ID != c[0].ID || got[0].Attempts != 0 || !got[0].RetryFrom.Equal(later) {
		t.Fatalf("after redelivery claimed %+v; want %s with a new window from %s", got, c[0].ID, later)
	}
	if n, err := s.Redeliver(context.Background(), later, nil); n != 1 || err != nil {
		t.Fatalf("Redeliver all: %d, %v", n, err)
	}
	if failed := listAll(t, s, true); len(failed) != 0 {
		t.Fatalf("%d failed after redelivering all", len(failed))
	}
}

func keepsAcknowledgedEvents(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("the harness cannot open a second store on the same database")
	}
	s := openOutbox(t, h, receivers)
	for i := range 5 {
		mustInsert(t, s, plant(t, int64(i), "Fern", nil))
	}
	other, ok := h.Reopen(t, s).(OutboxStore)
	if !ok {
		t.Skip("the reopened store has no outbox")
	}
	if got := listAll(t, other, false); len(got) != 10 {
		t.Fatalf("%d events after reopening; want every acknowledged one, 10", len(got))
	}
}
