package application_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func TestListTellsWhetherMoreFollows(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	create := application.NewCreatePlant(store, scopes)
	for _, id := range []int64{3, 1, 2} {
		if _, _, err := create.Create(ctx, writer, newPlant(t, id, "Ivy", nil)); err != nil {
			t.Fatal(err)
		}
	}
	uc := application.NewListPlants(store, scopes)
	for _, tt := range []struct {
		q    application.ListQuery
		ids  []domain.ID
		more bool
	}{
		{application.ListQuery{Limit: 2}, []domain.ID{1, 2}, true},
		{application.ListQuery{Limit: 3}, []domain.ID{1, 2, 3}, false},
		{application.ListQuery{Limit: 1, After: 2, HasAfter: true}, []domain.ID{3}, false},
		{application.ListQuery{Limit: 5, After: 3, HasAfter: true}, nil, false},
	} {
		page, err := uc.List(ctx, reader, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		var items []struct{ ID domain.ID }
		if err := json.Unmarshal(page.JSON, &items); err != nil {
			t.Fatalf("List(%+v): %s: %v", tt.q, page.JSON, err)
		}
		var ids []domain.ID
		for _, it := range items {
			ids = append(ids, it.ID)
		}
		if len(ids) != len(tt.ids) || page.More != tt.more {
			t.Fatalf("List(%+v) = %v more=%v; want %v more=%v", tt.q, ids, page.More, tt.ids, tt.more)
		}
		for i := range ids {
			if ids[i] != tt.ids[i] {
				t.Fatalf("List(%+v) = %v; want %v", tt.q, ids, tt.ids)
			}
		}
	}
}

func TestListRefusesALimitOutOfBounds(t *testing.T) {
	uc := application.NewListPlants(memory.New(), scopes)
	for _, limit := range []int{0, -1, application.MaxListLimit + 1} {
		_, err := uc.List(context.Background(), reader, application.ListQuery{Limit: limit})
		var fe *domain.FieldError
		if !errors.As(err, &fe) || fe.Field != "limit" || err.Error() != "limit: must be between 1 and 1000" {
			t.Errorf("limit %d: got %v", limit, err)
		}
	}
}

func TestListNeedsTheReadScope(t *testing.T) {
	uc := application.NewListPlants(memory.New(), scopes)
	var se *application.ScopeError
	if _, err := uc.List(context.Background(), writer, application.ListQuery{Limit: 1}); !errors.As(err, &se) || se.Scope != "plants:read" {
		t.Fatalf("got %v, want a scope error naming plants:read", err)
	}
}
