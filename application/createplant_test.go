package application_test

import (
	"context"
	"errors"
	"testing"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func newPlant(t *testing.T, id int64, name string, tag *string) domain.NewPlant {
	t.Helper()
	np, err := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: name, Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	return np
}

var (
	scopes = application.Scopes{Read: "plants:read", Write: "plants:write"}
	writer = application.Principal{Subject: "alice", Scopes: []string{"plants:write"}}
	reader = application.Principal{Subject: "eve", Scopes: []string{"plants:read"}}
)

func TestCreateThenReplayThenConflict(t *testing.T) {
	store := memory.New()
	uc := application.NewCreatePlant(store, scopes)
	ctx := context.Background()
	tag := "tropical"

	p, outcome, err := uc.Create(ctx, writer, newPlant(t, 1, "Monstera", &tag))
	if err != nil || outcome != application.Created || p.Name().String() != "Monstera" {
		t.Fatalf("create: %v %v %v", p, outcome, err)
	}
	first, _ := store.Record(1)
	if first.CreatedBy != "alice" {
		t.Fatalf("creator recorded as %q, want the principal's subject", first.CreatedBy)
	}
	if first.CreatedAt.IsZero() {
		t.Fatal("creation time not recorded")
	}

	p, outcome, err = uc.Create(ctx, application.Principal{Subject: "bob", Scopes: []string{"plants:write"}}, newPlant(t, 1, "Monstera", &tag))
	if err != nil || outcome != application.Replayed || p.Tag().String() != "tropical" {
		t.Fatalf("replay: %v %v %v", p, outcome, err)
	}
	if again, _ := store.Record(1); again != first {
		t.Fatal("a replay must not change the stored plant")
	}

	if _, _, err := uc.Create(ctx, writer, newPlant(t, 1, "Monstera", nil)); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("other content: got %v, want a conflict", err)
	}
	if again, _ := store.Record(1); again != first {
		t.Fatal("a conflict must not change the stored plant")
	}
}

func TestCreateNeedsTheWriteScope(t *testing.T) {
	store := memory.New()
	uc := application.NewCreatePlant(store, scopes)
	_, _, err := uc.Create(context.Background(), reader, newPlant(t, 1, "a", nil))
	var se *application.ScopeError
	if !errors.As(err, &se) || se.Scope != "plants:write" || !errors.Is(err, application.ErrForbidden) {
		t.Fatalf("got %v, want a scope error naming plants:write", err)
	}
	if _, stored := store.Record(1); stored {
		t.Fatal("an unauthorized create must write nothing")
	}
	if err := application.NewCreatePlant(store, application.Scopes{}).Authorize(reader); err != nil {
		t.Fatalf("an empty required scope turns the check off, got %v", err)
	}
}

func TestStoreErrorsPassThrough(t *testing.T) {
	store := memory.New()
	store.Inject(func() error { return errors.Join(errors.New("connection refused"), application.ErrUnavailable) })
	_, _, err := application.NewCreatePlant(store, scopes).Create(context.Background(), writer, newPlant(t, 1, "a", nil))
	if !errors.Is(err, application.ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
}

func BenchmarkCreate(b *testing.B) {
	uc := application.NewCreatePlant(memory.New(), scopes)
	np, _ := domain.ParseNewPlant(domain.PlantFields{ID: 1, Name: "Monstera"})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := uc.Create(ctx, writer, np); err != nil {
			b.Fatal(err)
		}
	}
}
