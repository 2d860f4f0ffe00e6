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
	uc := application.NewDeletePlant(store, scopes)
	if _, _, err := create.Create(ctx, writer, newPlant(t, 4, "Fern", nil)); err != nil {
		t.Fatal(err)
	}
	if err := uc.Delete(ctx, writer, 4); err != nil {
		t.Fatalf("delete: %v", err)
	}
	err := uc.Delete(ctx, writer, 4)
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
	uc := application.NewDeletePlant(store, scopes)
	var se *application.ScopeError
	if err := uc.Delete(context.Background(), reader, 1); !errors.As(err, &se) || se.Scope != "plants:write" {
		t.Fatalf("got %v, want a scope error naming plants:write", err)
	}
}
