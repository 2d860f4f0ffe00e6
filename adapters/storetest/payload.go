package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/adapters/internal/traceparent"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// openPayload opens a store announcing payload, or skips where the adapter
// cannot; on same's database when same is not nil.
func openPayload(t *testing.T, h Harness, payload application.Payload, receivers []string, same OutboxStore) OutboxStore {
	t.Helper()
	if h.OpenPayload == nil {
		t.Skip("the harness opens no store with a payload of its choice")
	}
	return h.OpenPayload(t, payload, receivers, same)
}

// deliveriesByNumber are the pending deliveries to url, by the number of
// the event each announces; a number announced twice to url fails the test.
func deliveriesByNumber(t *testing.T, s OutboxStore, url string) map[int64]application.EventStatus {
	t.Helper()
	out := map[int64]application.EventStatus{}
	for _, e := range listAll(t, s, false) {
		if e.URL != url {
			continue
		}
		if _, twice := out[e.Number]; twice {
			t.Fatalf("event %d announced twice to %s", e.Number, url)
		}
		out[e.Number] = e
	}
	return out
}

// With the event payload, every write that stores an event (a create that
// stores the plant, a change that changes it, a delete that removes it, by
// each port) announces it to every receiver in the same commit: one
// delivery per event and receiver, carrying the event as the feed has it
// (type, number, commit time, the plant's item byte for byte), each with an
// id of its own. A write that stores no event (a replay, a conflict, a
// change that changes nothing, a write of an absent plant, a failed
// precondition) announces nothing.
func announcesEveryWriteWithTheEventPayload(t *testing.T, h Harness) {
	s := openPayload(t, h, application.EventPayload, receivers, nil)
	since := time.Now()
	fern, moss := plant(t, 400, "Fern", tag("green")), plant(t, 400, "Moss", tag("green"))
	ivy := plant(t, 401, "Ivy", nil)
	mustInsert(t, s, fern)
	select {
	case <-s.Committed():
	case <-time.After(5 * time.Second):
		t.Fatal("no signal after a create stored deliveries")
	}
	mustInsert(t, s, ivy)
	mustFind(t, s, fern, fern)                       // a replay
	mustFind(t, s, plant(t, 400, "Moss", nil), fern) // a conflict
	mustChange(t, s, 400, application.PlantChange{Name: ptrTo(moss.Name())}, nil, moss, true)
	mustChange(t, s, 400, application.PlantChange{}, nil, moss, true)                         // nothing to change
	mustChange(t, s, 400, application.PlantChange{Name: ptrTo(moss.Name())}, nil, moss, true) // the same value
	mustChange(t, s, 400, application.PlantChange{Tag: &domain.NoTag}, &fern, moss, false)    // a failed precondition
	var nf *domain.NotFoundError
	if _, err := s.UpdatePlant(context.Background(), 402, changeIf(application.PlantChange{}, nil, nil)); !errors.As(err, &nf) {
		t.Fatalf("UpdatePlant(402) = %v, want not found", err)
	}
	if _, err := s.DeletePlantIf(context.Background(), 400, deleteIf(fern, nil)); !errors.Is(err, application.ErrPreconditionFailed) {
		t.Fatalf("DeletePlantIf(400) expecting what is not stored = %v, want the precondition failed", err)
	}
	if _, err := s.DeletePlantIf(context.Background(), 402, deleteIf(fern, nil)); !errors.As(err, &nf) {
		t.Fatalf("DeletePlantIf(402) = %v, want not found", err)
	}
	mustDelete(t, s, 402, false)
	mustDelete(t, s, 401, true)
	if got, err := s.DeletePlantIf(context.Background(), 400, deleteIf(moss, nil)); err != nil || got != moss {
		t.Fatalf("DeletePlantIf(400) = %s, %v; want %s deleted", describe(got), err, describe(moss))
	}
	mustInsert(t, s, fern) // the id is free again
	want := []wantEvent{
		{application.PlantCreated, fern},
		{application.PlantCreated, ivy},
		{application.PlantChanged, moss},
		{application.PlantDeleted, ivy},
		{application.PlantDeleted, moss},
		{application.PlantCreated, fern},
	}
	events, _ := walkUntil(t, s, nil, 100, len(want))
	checkEvents(t, events, want, since)

	ids := map[string]bool{}
	for _, url := range receivers {
		got := deliveriesByNumber(t, s, url)
		if len(got) != len(events) {
			t.Fatalf("%d deliveries to %s; want one per event, %d", len(got), url, len(events))
		}
		for _, e := range events {
			d, ok := got[e.Number]
			switch {
			case !ok:
				t.Fatalf("event %s is not announced to %s", e.ID, url)
			case string(d.Type) != e.Type || !bytes.Equal(d.Item, e.Plant) || !d.CreatedAt.Equal(e.Time) || d.PlantID != e.plantID(t):
				t.Errorf("delivery to %s of event %s is %s #%d %s of plant %d committed %s; want %s %s committed %s",
					url, e.ID, d.Type, d.Number, d.Item, d.PlantID, d.CreatedAt, e.Type, e.Plant, e.Time)
			case d.Attempts != 0 || !d.RetryFrom.Equal(d.CreatedAt) || d.Failed || d.ID == "" || ids[d.ID]:
				t.Errorf("delivery to %s of event %s: %+v; want a fresh one with an id of its own", url, e.ID, d)
			}
			ids[d.ID] = true
		}
	}
	pending, oldest, failed, err := s.OutboxStats(context.Background())
	if err != nil || pending != len(events)*len(receivers) || failed != 0 || oldest.IsZero() {
		t.Fatalf("stats: %d pending since %s, %d failed, %v", pending, oldest, failed, err)
	}
}

// With the plant payload, only a create that stores a plant is announced,
// with the plant as the body: a change or a delete is not, and no delivery
// carries an event.
func announcesOnlyCreatesWithThePlantPayload(t *testing.T, h Harness) {
	s := openPayload(t, h, application.PlantPayload, receivers[:1], nil)
	fern := plant(t, 410, "Fern", nil)
	mustInsert(t, s, fern)
	mustChange(t, s, 410, application.PlantChange{Name: ptrTo(plant(t, 410, "Moss", nil).Name())}, nil, plant(t, 410, "Moss", nil), true)
	mustDelete(t, s, 410, true)
	got := listAll(t, s, false)
	if len(got) != 1 || got[0].Type != "" || got[0].Number != 0 || !bytes.Equal(got[0].Item, plantjson.AppendItem(nil, fern)) {
		t.Fatalf("deliveries %+v; want the create's alone, its body the plant", got)
	}
}

// With the event payload, every delivery keeps the traceparent of the
// write that committed its event (a create, a change, a delete, each of a
// request of its own), through the outbox's forms before and after a first
// attempt; an untraced write's deliveries have none.
func keepsTheTraceParentOfEveryWrite(t *testing.T, h Harness) {
	s := openPayload(t, h, application.EventPayload, receivers[:1], nil)
	tracer := sdktrace.NewTracerProvider().Tracer("storetest")
	want := map[int64]string{} // by event number, once read from the feed
	traced := func(name string) (context.Context, func()) {
		ctx, sp := tracer.Start(context.Background(), name)
		return ctx, func() { sp.End() }
	}
	var parents []string // in the order of the writes, "" for untraced
	ctx, end := traced("create")
	if _, inserted, err := s.InsertIfAbsent(ctx, record(plant(t, 440, "Fern", nil))); err != nil || !inserted {
		t.Fatalf("InsertIfAbsent: %v, %v", inserted, err)
	}
	parents = append(parents, traceparent.From(ctx))
	end()
	mustInsert(t, s, plant(t, 441, "Ivy", nil)) // untraced
	parents = append(parents, "")
	ctx, end = traced("change")
	green := plant(t, 440, "Fern", tag("green"))
	if _, err := s.UpdatePlant(ctx, 440, changeIf(application.PlantChange{Tag: ptrTo(green.Tag())}, nil, nil)); err != nil {
		t.Fatal(err)
	}
	parents = append(parents, traceparent.From(ctx))
	end()
	ctx, end = traced("delete")
	if deleted, err := s.DeletePlant(ctx, 441); err != nil || !deleted {
		t.Fatalf("DeletePlant: %v, %v", deleted, err)
	}
	parents = append(parents, traceparent.From(ctx))
	end()
	events, _ := walkUntil(t, s, nil, 100, len(parents))
	for i, e := range events {
		want[e.Number] = parents[i]
	}
	now := time.Now().Add(time.Second).Truncate(time.Microsecond)
	check := func(at time.Time) []application.Event {
		t.Helper()
		claimed := claim(t, s, at, 100)
		if len(claimed) != len(want) {
			t.Fatalf("claimed %d; want %d", len(claimed), len(want))
		}
		for _, e := range claimed {
			if e.TraceParent != want[e.Number] {
				t.Errorf("delivery of %s #%d has traceparent %q; want %q", e.Type, e.Number, e.TraceParent, want[e.Number])
			}
		}
		return claimed
	}
	var retries []application.Settlement
	for _, e := range check(now) {
		retries = append(retries, application.Settlement{ID: e.ID, Claim: e.Claim, RetryAt: now, Error: "retry"})
	}
	if err := s.Settle(context.Background(), retries); err != nil {
		t.Fatal(err)
	}
	check(now.Add(time.Second))
}
