package application_test

import (
	"context"
	"errors"
	"testing"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestDeleteThenNotFoundThenFreeID(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	create := application.NewCreatePlant(store, scopes)
	uc := application.NewDeletePlant(store, store, scopes)
	if _, _, err := create.Create(ctx, writer, newPlant(t, 4, "Fern", nil)); err != nil {
		t.Fatal(err)
	}
	if err := uc.Delete(ctx, writer, 4, nil); err != nil {
		t.Fatalf("delete: %v", err)
	}
	err := uc.Delete(ctx, writer, 4, nil)
	var nf *domain.NotFoundError
	if !errors.As(err, &nf) || nf.ID != 4 || !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("second delete = %v; want not found naming id 4", err)
	}
	// The id is free again: other content is a new plant, not a conflict.
	if _, outcome, err := create.Create(ctx, writer, newPlant(t, 4, "Moss", nil)); err != nil || outcome != application.Created {
		t.Fatalf("create after delete = %v, %v; want created", outcome, err)
	}
}

func TestDeleteNeedsTheWriteScope(t *testing.T) {
	store := memory.New()
	uc := application.NewDeletePlant(store, store, scopes)
	var se *application.ScopeError
	if err := uc.Delete(context.Background(), reader, 1, nil); !errors.As(err, &se) || se.Scope != "plants:write" {
		t.Fatalf("got %v, want a scope error naming plants:write", err)
	}
}

func TestDeleteWithAPrecondition(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	if _, _, err := application.NewCreatePlant(store, scopes).Create(ctx, writer, newPlant(t, 4, "Fern", nil)); err != nil {
		t.Fatal(err)
	}
	uc := application.NewDeletePlant(store, store, scopes)
	isMoss := only(plantOf(t, 4, "Moss", nil))
	if err := uc.Delete(ctx, writer, 4, isMoss); !errors.Is(err, application.ErrPreconditionFailed) {
		t.Fatalf("delete of another plant = %v; want ErrPreconditionFailed", err)
	}
	if _, found := store.Record(4); !found {
		t.Fatal("a failed precondition deleted the plant")
	}
	isFern := only(plantOf(t, 4, "Fern", nil))
	if err := uc.Delete(ctx, writer, 4, isFern); err != nil {
		t.Fatalf("delete of the expected plant: %v", err)
	}
	var nf *domain.NotFoundError
	if err := uc.Delete(ctx, writer, 4, isFern); !errors.As(err, &nf) {
		t.Fatalf("conditional delete of an absent plant = %v; want not found", err)
	}
}
