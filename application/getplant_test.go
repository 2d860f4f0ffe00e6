package application_test

import (
	"context"
	"errors"
	"testing"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestGetReturnsTheStoredPlant(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	tag := "shade"
	if _, _, err := application.NewCreatePlant(store, scopes).Create(ctx, writer, newPlant(t, -2, "Fern", &tag)); err != nil {
		t.Fatal(err)
	}
	uc := application.NewGetPlant(store, scopes)
	p, err := uc.Get(ctx, reader, -2)
	if err != nil || p.ID() != -2 || p.Name().String() != "Fern" || p.Tag().String() != "shade" {
		t.Fatalf("get = %v, %v", p, err)
	}
	_, err = uc.Get(ctx, reader, 3)
	var nf *domain.NotFoundError
	if !errors.As(err, &nf) || nf.ID != 3 {
		t.Fatalf("get of an absent id = %v; want not found naming id 3", err)
	}
}

func TestGetNeedsTheReadScope(t *testing.T) {
	uc := application.NewGetPlant(memory.New(), scopes)
	var se *application.ScopeError
	if _, err := uc.Get(context.Background(), writer, 1); !errors.As(err, &se) || se.Scope != "plants:read" {
		t.Fatalf("got %v, want a scope error naming plants:read", err)
	}
}
