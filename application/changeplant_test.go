package application_test

import (
	"context"
	"errors"
	"testing"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestChangeSetsNameAndTag(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	uc := application.NewChangePlant(store, store, scopes)
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
	if _, err := uc.Change(ctx, writer, 4, application.PlantChange{}, func(domain.Plant) bool { return true }); !errors.As(err, &nf) {
		t.Fatalf("conditional change of an absent plant = %v; want not found", err)
	}
}

func TestChangeWithAPrecondition(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	uc := application.NewChangePlant(store, store, scopes)
	fern := plantOf(t, 3, "Fern", nil)
	if _, _, err := application.NewCreatePlant(store, scopes).Create(ctx, writer, newPlant(t, 3, "Fern", nil)); err != nil {
		t.Fatal(err)
	}
	moss := mustName(t, "Moss")
	isFern := func(p domain.Plant) bool { return p == fern }
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

// A write between the check and the change makes the store refuse the
// change; the use case checks the precondition again on the new plant.
func TestChangeChecksAgainAfterARacingWrite(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	if _, _, err := application.NewCreatePlant(store, scopes).Create(ctx, writer, newPlant(t, 3, "Fern", nil)); err != nil {
		t.Fatal(err)
	}
	racer := racingStore{Store: store, race: mustName(t, "Racer")}
	uc := application.NewChangePlant(&racer, store, scopes)
	moss := mustName(t, "Moss")
	checked := 0
	anyFern := func(domain.Plant) bool { checked++; return true }
	if got, err := uc.Change(ctx, writer, 3, application.PlantChange{Name: &moss}, anyFern); err != nil || got.Name() != moss || checked != 2 {
		t.Fatalf("change after a race = %v, %v after %d checks; want Moss after 2", got, err, checked)
	}
	racer.race, racer.done = mustName(t, "Again"), false
	onlyMoss := func(p domain.Plant) bool { return p.Name() == moss }
	if _, err := uc.Change(ctx, writer, 3, application.PlantChange{Tag: &domain.NoTag}, onlyMoss); !errors.Is(err, application.ErrPreconditionFailed) {
		t.Fatalf("change after a race to another state = %v; want ErrPreconditionFailed", err)
	}
}

// racingStore renames the plant once, just before the first change reaches
// the store, as a concurrent writer would.
type racingStore struct {
	*memory.Store
	race domain.Name
	done bool
}

func (r *racingStore) ChangePlant(ctx context.Context, id domain.ID, c application.PlantChange, expect *domain.Plant) (application.Changed, error) {
	if !r.done {
		r.done = true
		if _, err := r.Store.ChangePlant(ctx, id, application.PlantChange{Name: &r.race}, nil); err != nil {
			return application.Changed{}, err
		}
	}
	return r.Store.ChangePlant(ctx, id, c, expect)
}

func TestChangeNeedsTheWriteScope(t *testing.T) {
	store := memory.New()
	uc := application.NewChangePlant(store, store, scopes)
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
