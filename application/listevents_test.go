package application_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// Every use case's write shows in the feed, each as one event of its kind,
// and nothing else does.
func TestEveryWriteOfTheUseCasesIsOneEvent(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	create := application.NewCreatePlant(store, scopes)
	change := application.NewChangePlant(store, scopes)
	del := application.NewDeletePlant(store, store, scopes)
	feed := application.NewListEvents(store, scopes, application.DefaultEventRetention)
	if _, _, err := create.Create(ctx, writer, newPlant(t, 1, "Ivy", nil)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := create.Create(ctx, writer, newPlant(t, 1, "Ivy", nil)); err != nil { // a replay
		t.Fatal(err)
	}
	moss, _ := domain.ParseName("Moss")
	if _, err := change.Change(ctx, writer, 1, application.PlantChange{Name: &moss}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := change.Change(ctx, writer, 1, application.PlantChange{}, nil); err != nil { // nothing to change
		t.Fatal(err)
	}
	never := func(domain.Plant) error { return application.ErrPreconditionFailed }
	if err := del.Delete(ctx, writer, 1, never); !errors.Is(err, application.ErrPreconditionFailed) {
		t.Fatalf("Delete with a failing precondition = %v", err)
	}
	if err := del.Delete(ctx, writer, 1, nil); err != nil {
		t.Fatal(err)
	}
	page, err := feed.List(ctx, reader, application.FeedQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var events []struct {
		Type  string
		Plant struct{ Name string }
	}
	if err := json.Unmarshal(page.JSON, &events); err != nil {
		t.Fatalf("%s: %v", page.JSON, err)
	}
	want := []string{"plant.created Ivy", "plant.changed Moss", "plant.deleted Moss"}
	if len(events) != len(want) || page.Count != len(want) {
		t.Fatalf("the feed is %s, want %v", page.JSON, want)
	}
	for i, e := range events {
		if got := e.Type + " " + e.Plant.Name; got != want[i] {
			t.Fatalf("event %d is %s, want %s", i, got, want[i])
		}
	}
}

// The feed needs the read scope and a limit in bounds, and judges a cursor
// by the retention it was given.
func TestListEventsChecksItsCallerLimitAndCursor(t *testing.T) {
	uc := application.NewListEvents(memory.New(), scopes, application.EventRetention(time.Hour))
	var se *application.ScopeError
	if _, err := uc.List(context.Background(), writer, application.FeedQuery{Limit: 1}); !errors.As(err, &se) || se.Scope != scopes.Read {
		t.Fatalf("List by a writer = %v, want the read scope missing", err)
	}
	for _, limit := range []int{0, -1, application.MaxEventLimit + 1} {
		var fe *domain.FieldError
		if _, err := uc.List(context.Background(), reader, application.FeedQuery{Limit: limit}); !errors.As(err, &fe) || fe.Field != "limit" {
			t.Fatalf("List with limit %d = %v, want a problem with limit", limit, err)
		}
	}
	page, err := uc.List(context.Background(), reader, application.FeedQuery{Limit: application.MaxEventLimit})
	if err != nil || string(page.JSON) != "[]" {
		t.Fatalf("List of an empty feed = %s, %v", page.JSON, err)
	}
	fresh := application.FeedQuery{After: page.Next, HasAfter: true, Limit: 1}
	if _, err := uc.List(context.Background(), reader, fresh); err != nil {
		t.Fatalf("List after a fresh cursor = %v", err)
	}
	old := fresh
	old.After.At = old.After.At.Add(-61 * time.Minute)
	if _, err := uc.List(context.Background(), reader, old); !errors.Is(err, application.ErrFeedExpired) {
		t.Fatalf("List after a cursor older than the retention = %v, want ErrFeedExpired", err)
	}
}
