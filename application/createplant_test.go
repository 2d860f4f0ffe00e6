package application_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// memoryStore is a hand-written fake of the PlantStore port.
type memoryStore struct {
	mu      sync.Mutex
	plants  map[domain.ID]application.Record
	inserts int
	err     error
}

func newMemoryStore() *memoryStore {
	return &memoryStore{plants: map[domain.ID]application.Record{}}
}

func (m *memoryStore) InsertIfAbsent(_ context.Context, rec application.Record) (domain.Plant, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return domain.Plant{}, false, m.err
	}
	if existing, ok := m.plants[rec.Plant.ID()]; ok {
		return existing.Plant, false, nil
	}
	m.plants[rec.Plant.ID()] = rec
	m.inserts++
	return rec.Plant, true, nil
}

func newPlant(t *testing.T, id int64, name string, tag *string) domain.NewPlant {
	t.Helper()
	np, err := domain.ParseNewPlant(id, name, tag)
	if err != nil {
		t.Fatal(err)
	}
	return np
}

var writer = application.Principal{Subject: "alice", Scopes: []string{"plants:write"}}

func TestCreateThenReplayThenConflict(t *testing.T) {
	store := newMemoryStore()
	uc := application.NewCreatePlant(store, "plants:write")
	ctx := context.Background()
	tag := "tropical"

	p, outcome, err := uc.Create(ctx, writer, newPlant(t, 1, "Monstera", &tag))
	if err != nil || outcome != application.Created || p.Name().String() != "Monstera" {
		t.Fatalf("create: %v %v %v", p, outcome, err)
	}
	if got := store.plants[1].CreatedBy; got != "alice" {
		t.Fatalf("creator recorded as %q, want the principal's subject", got)
	}
	if store.plants[1].CreatedAt.IsZero() {
		t.Fatal("creation time not recorded")
	}

	p, outcome, err = uc.Create(ctx, application.Principal{Subject: "bob", Scopes: []string{"plants:write"}}, newPlant(t, 1, "Monstera", &tag))
	if err != nil || outcome != application.Replayed || p.Tag().String() != "tropical" {
		t.Fatalf("replay: %v %v %v", p, outcome, err)
	}
	if store.plants[1].CreatedBy != "alice" {
		t.Fatal("a replay must not change the stored plant")
	}

	if _, _, err := uc.Create(ctx, writer, newPlant(t, 1, "Monstera", nil)); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("other content: got %v, want a conflict", err)
	}
	if store.plants[1].Plant.Tag().String() != "tropical" || store.inserts != 1 {
		t.Fatal("a conflict must not change the stored plant")
	}
}

func TestScopeIsRequired(t *testing.T) {
	store := newMemoryStore()
	uc := application.NewCreatePlant(store, "plants:write")
	reader := application.Principal{Subject: "eve", Scopes: []string{"plants:read"}}
	_, _, err := uc.Create(context.Background(), reader, newPlant(t, 1, "a", nil))
	var se *application.ScopeError
	if !errors.As(err, &se) || se.Scope != "plants:write" || !errors.Is(err, application.ErrForbidden) {
		t.Fatalf("got %v, want a scope error naming plants:write", err)
	}
	if store.inserts != 0 {
		t.Fatal("an unauthorized create must write nothing")
	}
	if err := application.NewCreatePlant(store, "").Authorize(reader); err != nil {
		t.Fatalf("an empty required scope turns the check off, got %v", err)
	}
}

func TestStoreErrorsPassThrough(t *testing.T) {
	store := newMemoryStore()
	store.err = errors.Join(errors.New("connection refused"), application.ErrUnavailable)
	_, _, err := application.NewCreatePlant(store, "").Create(context.Background(), writer, newPlant(t, 1, "a", nil))
	if !errors.Is(err, application.ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
}

func BenchmarkCreate(b *testing.B) {
	uc := application.NewCreatePlant(nopStore{}, "plants:write")
	np, _ := domain.ParseNewPlant(1, "Monstera", nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := uc.Create(ctx, writer, np); err != nil {
			b.Fatal(err)
		}
	}
}

type nopStore struct{}

func (nopStore) InsertIfAbsent(_ context.Context, rec application.Record) (domain.Plant, bool, error) {
	return rec.Plant, true, nil
}
