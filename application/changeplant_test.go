package application_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestChangeSetsNameAndTag(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	uc := application.NewChangePlant(store, scopes)
	if _, _, err := application.NewCreatePlant(store, scopes).Create(ctx, writer, newPlant(t, 3, "Fern", ptr("green"))); err != nil {
		t.Fatal(err)
	}
	moss, blue := mustName(t, "Moss"), mustTag(t, "blue")
	for _, tt := range []struct {
		name   string
		change application.PlantChange
		want   domain.Plant
	}{
		{"nothing", application.PlantChange{}, plantOf(t, 3, "Fern", ptr("green"))},
		{"the name", application.PlantChange{Name: &moss}, plantOf(t, 3, "Moss", ptr("green"))},
		{"the tag", application.PlantChange{Tag: &blue}, plantOf(t, 3, "Moss", ptr("blue"))},
		{"no tag", application.PlantChange{Tag: &domain.NoTag}, plantOf(t, 3, "Moss", nil)},
	} {
		got, err := uc.Change(ctx, writer, 3, tt.change, nil)
		if err != nil || got != tt.want {
			t.Fatalf("change %s = %v, %v; want %v", tt.name, got, err, tt.want)
		}
		if rec, _ := store.Record(3); rec.Plant != tt.want || rec.CreatedBy != "alice" {
			t.Fatalf("change %s stored %+v", tt.name, rec)
		}
	}
	var nf *domain.NotFoundError
	if _, err := uc.Change(ctx, writer, 4, application.PlantChange{Name: &moss}, nil); !errors.As(err, &nf) || nf.ID != 4 {
		t.Fatalf("change of an absent plant = %v; want not found naming id 4", err)
	}
	if _, err := uc.Change(ctx, writer, 4, application.PlantChange{}, func(domain.Plant) error { return nil }); !errors.As(err, &nf) {
		t.Fatalf("conditional change of an absent plant = %v; want not found", err)
	}
}

func TestChangeWithAPrecondition(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	uc := application.NewChangePlant(store, scopes)
	fern := plantOf(t, 3, "Fern", nil)
	if _, _, err := application.NewCreatePlant(store, scopes).Create(ctx, writer, newPlant(t, 3, "Fern", nil)); err != nil {
		t.Fatal(err)
	}
	moss := mustName(t, "Moss")
	isFern := only(fern)
	if got, err := uc.Change(ctx, writer, 3, application.PlantChange{Name: &moss}, isFern); err != nil || got.Name() != moss {
		t.Fatalf("change of the expected plant = %v, %v", got, err)
	}
	// The plant is no longer the one the precondition names.
	if _, err := uc.Change(ctx, writer, 3, application.PlantChange{Tag: &domain.NoTag}, isFern); !errors.Is(err, application.ErrPreconditionFailed) {
		t.Fatalf("change of another plant = %v; want ErrPreconditionFailed", err)
	}
	if rec, _ := store.Record(3); rec.Plant.Name() != moss {
		t.Fatalf("a failed precondition wrote %v", rec.Plant)
	}
}

// A precondition's refusal is the answer, as it is when it matches
// ErrPreconditionFailed, so that an adapter can say which condition failed;
// any other error is made to match it.
func TestChangeAnswersThePreconditionsRefusal(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	if _, _, err := application.NewCreatePlant(store, scopes).Create(ctx, writer, newPlant(t, 3, "Fern", nil)); err != nil {
		t.Fatal(err)
	}
	uc := application.NewChangePlant(store, scopes)
	named := fmt.Errorf("If-None-Match: %w", application.ErrPreconditionFailed)
	if _, err := uc.Change(ctx, writer, 3, application.PlantChange{}, func(domain.Plant) error { return named }); err != named {
		t.Fatalf("change refused by its precondition = %v; want the refusal itself", err)
	}
	other := errors.New("not this one")
	if _, err := uc.Change(ctx, writer, 3, application.PlantChange{}, func(domain.Plant) error { return other }); !errors.Is(err, application.ErrPreconditionFailed) || !errors.Is(err, other) {
		t.Fatalf("change refused with another error = %v; want one matching ErrPreconditionFailed and it", err)
	}
	if err := application.NewDeletePlant(store, store, scopes).Delete(ctx, writer, 3, func(domain.Plant) error { return named }); err != named {
		t.Fatalf("delete refused by its precondition = %v; want the refusal itself", err)
	}
	if _, found := store.Record(3); !found {
		t.Fatal("a refused delete deleted the plant")
	}
}

// only is the precondition that the stored plant is want.
func only(want domain.Plant) application.Precondition {
	return func(stored domain.Plant) error {
		if stored != want {
			return application.ErrPreconditionFailed
		}
		return nil
	}
}

// A store calls the update again when another writer came between its
// read and its write: the precondition is checked on the plant the store
// holds at the write, each time it asks.
func TestChangeChecksThePreconditionOnWhatTheStoreHoldsAtTheWrite(t *testing.T) {
	fern, racer := plantOf(t, 3, "Fern", nil), plantOf(t, 3, "Racer", nil)
	store := &racingUpdater{states: []domain.Plant{fern, racer}}
	uc := application.NewChangePlant(store, scopes)
	moss := mustName(t, "Moss")
	var checked []domain.Plant
	anyPlant := func(p domain.Plant) error { checked = append(checked, p); return nil }
	if got, err := uc.Change(context.Background(), writer, 3, application.PlantChange{Name: &moss}, anyPlant); err != nil || got != racer.WithName(moss) {
		t.Fatalf("change after a race = %v, %v; want the racer's plant renamed", got, err)
	}
	if len(checked) != 2 || checked[0] != fern || checked[1] != racer {
		t.Fatalf("checked %v; want the plant before the race, then after it", checked)
	}
	store.states = []domain.Plant{fern, racer}
	onlyFern := only(fern)
	if _, err := uc.Change(context.Background(), writer, 3, application.PlantChange{Tag: &domain.NoTag}, onlyFern); !errors.Is(err, application.ErrPreconditionFailed) {
		t.Fatalf("change after a race to another state = %v; want ErrPreconditionFailed", err)
	}
}

// racingUpdater calls an update on each of states in turn, as a store
// whose write met other writers in between does, and answers the last
// call's result.
type racingUpdater struct {
	application.PlantUpdater
	states []domain.Plant
}

func (r *racingUpdater) UpdatePlant(_ context.Context, _ domain.ID, update application.Update) (domain.Plant, error) {
	var (
		next domain.Plant
		err  error
	)
	for _, p := range r.states {
		next, _, err = update.On(p)
	}
	return next, err
}

func TestChangeNeedsTheWriteScope(t *testing.T) {
	store := memory.New()
	uc := application.NewChangePlant(store, scopes)
	var se *application.ScopeError
	if _, err := uc.Change(context.Background(), reader, 1, application.PlantChange{}, nil); !errors.As(err, &se) || se.Scope != "plants:write" {
		t.Fatalf("got %v, want a scope error naming plants:write", err)
	}
}

func mustName(t *testing.T, s string) domain.Name {
	t.Helper()
	n, err := domain.ParseName(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustTag(t *testing.T, s string) domain.Tag {
	t.Helper()
	tg, err := domain.ParseTag(s)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func plantOf(t *testing.T, id int64, name string, tag *string) domain.Plant {
	t.Helper()
	return domain.PlantFrom(newPlant(t, id, name, tag))
}

func ptr(s string) *string { return &s }
