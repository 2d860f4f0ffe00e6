package storetest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
)

// A delivery of the event payload keeps its event through every step of
// the outbox: claimed (from whatever form the store keeps deliveries in
// before their first attempt, and after it), retried, failed, redelivered,
// delivered.
func claimsEveryWriteWithItsEvent(t *testing.T, h Harness) {
	s := openPayload(t, h, application.EventPayload, receivers[:1], nil)
	for id := range int64(3) {
		mustInsert(t, s, plant(t, 420+id, "Fern", nil))
	}
	green := plant(t, 420, "Fern", tag("green"))
	mustChange(t, s, 420, application.PlantChange{Tag: ptrTo(green.Tag())}, nil, green, true)
	mustDelete(t, s, 421, true)
	listed := deliveriesByNumber(t, s, receivers[0])
	if len(listed) != 5 {
		t.Fatalf("%d deliveries; want 5", len(listed))
	}
	same := func(step string, e application.Event) {
		t.Helper()
		l, ok := listed[e.Number]
		if !ok || e.ID != l.ID || e.Type != l.Type || !bytes.Equal(e.Item, l.Item) || !e.CreatedAt.Equal(l.CreatedAt) || e.PlantID != l.PlantID {
			t.Fatalf("%s: %+v; want the event it announced, %+v", step, e, l.Event)
		}
	}
	now := time.Now().Add(time.Second).Truncate(time.Microsecond) // stores keep microseconds
	first := claim(t, s, now, 2)
	rest := claim(t, s, now, 10)
	if len(first) != 2 || len(rest) != 3 {
		t.Fatalf("claimed %d, then %d; want 2, then the other 3", len(first), len(rest))
	}
	var outcomes []application.Settlement
	for i, e := range append(first, rest...) {
		same("claimed", e)
		o := application.Settlement{ID: e.ID, Claim: e.Claim, RetryAt: now, Error: "503"}
		if i == 0 {
			o.Failed = true
		}
		outcomes = append(outcomes, o)
	}
	if err := s.Settle(context.Background(), outcomes); err != nil {
		t.Fatal(err)
	}
	failed := listAll(t, s, true)
	if len(failed) != 1 || failed[0].ID != first[0].ID {
		t.Fatalf("failed %+v; want %s", failed, first[0].ID)
	}
	same("failed", failed[0].Event)
	later := now.Add(2 * time.Second)
	if n, err := s.Redeliver(context.Background(), later, []string{first[0].ID}); n != 1 || err != nil {
		t.Fatalf("Redeliver: %d, %v", n, err)
	}
	again := claim(t, s, later, 10)
	if len(again) != 5 {
		t.Fatalf("claimed %d once retried and redelivered; want 5", len(again))
	}
	outcomes = outcomes[:0]
	for _, e := range again {
		same("retried", e)
		outcomes = append(outcomes, application.Settlement{ID: e.ID, Claim: e.Claim, Delivered: true})
	}
	if err := s.Settle(context.Background(), outcomes); err != nil {
		t.Fatal(err)
	}
	if left := listAll(t, s, false); len(left) != 0 {
		t.Fatalf("%d deliveries left once delivered", len(left))
	}
}

// Stores of either payload on one database (replicas while the setting
// changes, or the same service before and after) deliver every delivery of
// both: each claims, lists, counts and redelivers the other's too, and each
// delivery keeps its own body.
func deliversBothPayloadsWhicheverItWrites(t *testing.T, h Harness) {
	plants := openPayload(t, h, application.PlantPayload, receivers[:1], nil)
	events := openPayload(t, h, application.EventPayload, receivers[:1], plants)
	fern := plant(t, 430, "Fern", nil)
	mustInsert(t, plants, fern)
	green := plant(t, 430, "Fern", tag("green"))
	mustChange(t, events, 430, application.PlantChange{Tag: ptrTo(green.Tag())}, nil, green, true)
	mustInsert(t, events, plant(t, 431, "Ivy", nil))
	now := time.Now().Add(time.Second).Truncate(time.Microsecond)
	for i, s := range []OutboxStore{plants, events} {
		at := now.Add(time.Duration(i) * 2 * time.Second)
		if pending, _, _, err := s.OutboxStats(context.Background()); err != nil || pending != 3 {
			t.Fatalf("store %d counts %d pending, %v; want 3", i, pending, err)
		}
		if listed := listAll(t, s, false); len(listed) != 3 {
			t.Fatalf("store %d lists %d; want 3", i, len(listed))
		}
		claimed := claim(t, s, at, 10)
		types := map[application.EventType]int{}
		var retries []application.Settlement
		for _, e := range claimed {
			types[e.Type]++
			if e.Type == "" && !bytes.Equal(e.Item, plantjson.AppendItem(nil, fern)) {
				t.Errorf("the plant payload's delivery is %s", e.Item)
			}
			retries = append(retries, application.Settlement{ID: e.ID, Claim: e.Claim, RetryAt: at, Failed: true, Error: "503"})
		}
		if len(claimed) != 3 || types[""] != 1 || types[application.PlantChanged] != 1 || types[application.PlantCreated] != 1 {
			t.Fatalf("store %d claimed %d: %v; want the create of the plant payload and a change and a create of the event payload", i, len(claimed), types)
		}
		if err := s.Settle(context.Background(), retries); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Redeliver(context.Background(), at.Add(time.Second), nil); n != 3 || err != nil {
			t.Fatalf("store %d redelivered %d, %v; want 3", i, n, err)
		}
	}
}
