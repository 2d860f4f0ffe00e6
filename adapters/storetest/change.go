package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func changesAStoredPlant(t *testing.T, h Harness) {
	s := h.Open(t)
	fern := plant(t, 80, "Fern", tag("green"))
	mustInsert(t, s, fern)
	moss, blue := plant(t, 80, "Moss", tag("green")), plant(t, 80, "Moss", tag("blue"))
	mustChange(t, s, 80, application.PlantChange{}, nil, fern, true)
	mustChange(t, s, 80, application.PlantChange{Name: ptrTo(moss.Name())}, nil, moss, true)
	mustChange(t, s, 80, application.PlantChange{Tag: ptrTo(blue.Tag())}, nil, blue, true)
	bare := plant(t, 80, "Moss", nil)
	mustChange(t, s, 80, application.PlantChange{Tag: &domain.NoTag}, nil, bare, true)
	// A create replay compares with the plant as it is now.
	mustFind(t, s, fern, bare)
	mustFind(t, s, bare, bare)
	// An expectation that holds lets the change through; one that does not
	// leaves the plant and answers it.
	mustChange(t, s, 80, application.PlantChange{Name: ptrTo(fern.Name())}, &bare, plant(t, 80, "Fern", nil), true)
	mustChange(t, s, 80, application.PlantChange{Tag: &domain.NoTag}, &bare, plant(t, 80, "Fern", nil), false)
	// Text is stored byte for byte, whatever it holds.
	odd := plant(t, 80, "x'); DROP TABLE plants; --", tag(`"\{NULL},`))
	mustChange(t, s, 80, application.PlantChange{Name: ptrTo(odd.Name()), Tag: ptrTo(odd.Tag())}, nil, odd, true)
	if got, found, err := s.FindPlant(context.Background(), 80); err != nil || !found || got != odd {
		t.Fatalf("FindPlant after the changes = %s, %v, %v; want %s", describe(got), found, err, describe(odd))
	}
	// An absent plant is found by no change.
	for _, expect := range []*domain.Plant{nil, &odd} {
		res, err := s.ChangePlant(context.Background(), 81, application.PlantChange{}, expect)
		if err != nil || res.Found || res.Applied {
			t.Fatalf("ChangePlant(81) with nothing stored = %+v, %v; want not found", res, err)
		}
	}
	if h.Reopen != nil {
		if got, found, err := h.Reopen(t, s).FindPlant(context.Background(), 80); err != nil || !found || got != odd {
			t.Fatalf("another store finds %s, %v, %v; want the acknowledged change", describe(got), found, err)
		}
	}
}

// keepsTheOrderOfChangesCreatesAndDeletes runs a sequence of writes on each
// of many ids at once, so that batches mix every kind of write on many ids,
// and checks every answer: each write sees exactly the writes of its id
// acknowledged before it.
func keepsTheOrderOfChangesCreatesAndDeletes(t *testing.T, h Harness) {
	s := h.Open(t)
	const ids, rounds = 16, 8
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			id := int64(90 + i)
			for r := range rounds {
				first := plant(t, id, fmt.Sprintf("Plant %d", r), nil)
				renamed := plant(t, id, fmt.Sprintf("Renamed %d", r), tag("t"))
				if _, inserted, err := s.InsertIfAbsent(context.Background(), record(first)); err != nil || !inserted {
					t.Errorf("id %d round %d: create = %v, %v", id, r, inserted, err)
					return
				}
				steps := []struct {
					change  application.PlantChange
					expect  *domain.Plant
					want    domain.Plant
					applied bool
				}{
					{application.PlantChange{Name: ptrTo(renamed.Name())}, nil, plant(t, id, renamed.Name().String(), nil), true},
					{application.PlantChange{Tag: ptrTo(renamed.Tag())}, &first, plant(t, id, renamed.Name().String(), nil), false},
					{application.PlantChange{Tag: ptrTo(renamed.Tag())}, nil, renamed, true},
				}
				for k, st := range steps {
					res, err := s.ChangePlant(context.Background(), domain.ID(id), st.change, st.expect)
					if err != nil || !res.Found || res.Applied != st.applied || res.Plant != st.want {
						t.Errorf("id %d round %d step %d: %+v, %v; want %s, applied %v", id, r, k, res, err, describe(st.want), st.applied)
						return
					}
				}
				if stored, inserted, err := s.InsertIfAbsent(context.Background(), record(first)); err != nil || inserted || stored != renamed {
					t.Errorf("id %d round %d: create after the change = %s, %v, %v; want the changed plant", id, r, describe(stored), inserted, err)
					return
				}
				if deleted, err := s.DeletePlant(context.Background(), domain.ID(id)); err != nil || !deleted {
					t.Errorf("id %d round %d: delete = %v, %v", id, r, deleted, err)
					return
				}
				if res, err := s.ChangePlant(context.Background(), domain.ID(id), application.PlantChange{}, nil); err != nil || res.Found {
					t.Errorf("id %d round %d: change after the delete = %+v, %v; want not found", id, r, res, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// oneWinnerAmongChangesExpectingOnePlant races changes that all expect the
// plant as first stored, half of them through a second store on the same
// database when the harness has one: exactly one is applied, and every
// other answers the winner's plant.
func oneWinnerAmongChangesExpectingOnePlant(t *testing.T, h Harness) {
	s := h.Open(t)
	other := s
	if h.Reopen != nil {
		other = h.Reopen(t, s)
	}
	original := plant(t, 120, "Original", nil)
	mustInsert(t, s, original)
	const callers = 32
	results := make([]application.Changed, callers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			store := s
			if i%2 == 1 {
				store = other
			}
			name := plant(t, 120, fmt.Sprintf("Writer %d", i), nil).Name()
			res, err := store.ChangePlant(context.Background(), 120, application.PlantChange{Name: &name}, &original)
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
			results[i] = res
		})
	}
	close(start)
	wg.Wait()
	var winners []domain.Plant
	for _, r := range results {
		if r.Applied {
			winners = append(winners, r.Plant)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d changes expecting one plant were applied; want exactly 1: %+v", len(winners), results)
	}
	for i, r := range results {
		if !r.Found || r.Plant != winners[0] {
			t.Errorf("writer %d answered %+v; want the winner's %s", i, r, describe(winners[0]))
		}
	}
	if got, _, err := s.FindPlant(context.Background(), 120); err != nil || got != winners[0] {
		t.Fatalf("stored %s, %v; want the winner's %s", describe(got), err, describe(winners[0]))
	}
}

// mustChange applies c to id and checks the answer.
func mustChange(t *testing.T, s Store, id domain.ID, c application.PlantChange, expect *domain.Plant, want domain.Plant, applied bool) {
	t.Helper()
	res, err := s.ChangePlant(context.Background(), id, c, expect)
	if err != nil {
		t.Fatalf("ChangePlant(%d): %v", id, err)
	}
	if !res.Found || res.Applied != applied || res.Plant != want {
		t.Fatalf("ChangePlant(%d) = %s, found %v, applied %v; want %s, applied %v",
			id, describe(res.Plant), res.Found, res.Applied, describe(want), applied)
	}
}

func ptrTo[T any](v T) *T { return &v }
