package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The cases of this file hold writes to a condition that forbids states
// (HTTP's If-None-Match) rather than one that expects a state (If-Match):
// the store must check it on the plant it holds at the write, in one atomic
// step with the write, exactly as it does an expectation.

// unless is the condition of a write that may not find the plant in any of
// the forbidden states: nil, or ErrPreconditionFailed. saw, when not nil,
// is set to the plant it last saw.
func unless(saw *domain.Plant, forbidden ...domain.Plant) application.Check {
	return func(stored domain.Plant) error {
		if saw != nil {
			*saw = stored
		}
		if slices.Contains(forbidden, stored) {
			return application.ErrPreconditionFailed
		}
		return nil
	}
}

// changeUnless is the update of a change under the condition cond, as the
// change use case builds it.
func changeUnless(c application.PlantChange, cond application.Check) application.Update {
	return func(stored domain.Plant) (domain.Plant, error) {
		if err := cond(stored); err != nil {
			return domain.Plant{}, err
		}
		return c.Apply(stored), nil
	}
}

// A write whose condition forbids the stored plant is refused and changes
// nothing, for this store and any other on the database; one whose
// condition holds goes ahead; an absent plant is not found whatever the
// condition.
func refusesWritesToAForbiddenState(t *testing.T, h Harness) {
	s := h.Open(t)
	fern := plant(t, 140, "Fern", tag("green"))
	moss := plant(t, 140, "Moss", tag("green"))
	mustInsert(t, s, fern)
	var saw domain.Plant
	if got, err := s.UpdatePlant(context.Background(), 140, changeUnless(application.PlantChange{Name: ptrTo(moss.Name())}, unless(&saw, moss, fern))); !errors.Is(err, application.ErrPreconditionFailed) || saw != fern {
		t.Fatalf("UpdatePlant forbidding the stored plant = %s (saw %s), %v; want it refused", describe(got), describe(saw), err)
	}
	if _, err := s.DeletePlantIf(context.Background(), 140, unless(&saw, fern)); !errors.Is(err, application.ErrPreconditionFailed) || saw != fern {
		t.Fatalf("DeletePlantIf forbidding the stored plant saw %s, %v; want it refused", describe(saw), err)
	}
	stores := []Store{s}
	if h.Reopen != nil {
		stores = append(stores, h.Reopen(t, s))
	}
	for i, store := range stores {
		if got, found, err := store.FindPlant(context.Background(), 140); err != nil || !found || got != fern {
			t.Fatalf("store %d finds %s, %v, %v after the refusals; want the plant unchanged", i, describe(got), found, err)
		}
	}
	// A condition that forbids only other states lets the write through.
	if got, err := s.UpdatePlant(context.Background(), 140, changeUnless(application.PlantChange{Name: ptrTo(moss.Name())}, unless(nil, moss))); err != nil || got != moss {
		t.Fatalf("UpdatePlant forbidding another state = %s, %v; want %s", describe(got), err, describe(moss))
	}
	if deleted, err := s.DeletePlantIf(context.Background(), 140, unless(nil, fern)); err != nil || deleted != moss {
		t.Fatalf("DeletePlantIf forbidding another state = %s, %v; want %s deleted", describe(deleted), err, describe(moss))
	}
	// Absent: not found, even for a condition that forbids nothing.
	var nf *domain.NotFoundError
	if _, err := s.UpdatePlant(context.Background(), 140, changeUnless(application.PlantChange{}, unless(nil))); !errors.As(err, &nf) || nf.ID != 140 {
		t.Fatalf("UpdatePlant of a deleted plant = %v; want not found", err)
	}
	if _, err := s.DeletePlantIf(context.Background(), 140, unless(nil)); !errors.As(err, &nf) {
		t.Fatalf("DeletePlantIf of a deleted plant = %v; want not found", err)
	}
}

// oneWinnerAmongChangesForbiddingEachOthersStates races changes that each
// rename the plant to a name of their own, on the condition that the plant
// is in none of the states the writers leave (as If-None-Match listing
// every writer's ETag), half of them through a second store on the same
// database when the harness has one: exactly one is applied, and every
// other is refused on the winner's plant, which stays stored.
func oneWinnerAmongChangesForbiddingEachOthersStates(t *testing.T, h Harness) {
	s := h.Open(t)
	other := s
	if h.Reopen != nil {
		other = h.Reopen(t, s)
	}
	mustInsert(t, s, plant(t, 141, "Original", nil))
	const callers = 32
	results := make([]domain.Plant, callers)
	for i := range results {
		results[i] = plant(t, 141, fmt.Sprintf("Writer %d", i), nil)
	}
	type answer struct {
		stored, saw domain.Plant
		applied     bool
	}
	answers := make([]answer, callers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			store := s
			if i%2 == 1 {
				store = other
			}
			var a answer
			var err error
			a.stored, err = store.UpdatePlant(context.Background(), 141,
				changeUnless(application.PlantChange{Name: ptrTo(results[i].Name())}, unless(&a.saw, results...)))
			switch {
			case err == nil:
				a.applied = true
			case !errors.Is(err, application.ErrPreconditionFailed):
				t.Errorf("writer %d: %v", i, err)
			}
			answers[i] = a
		})
	}
	close(start)
	wg.Wait()
	var winners []domain.Plant
	for i, a := range answers {
		if a.applied {
			if a.stored != results[i] {
				t.Errorf("writer %d applied, answering %s; want its own %s", i, describe(a.stored), describe(results[i]))
			}
			winners = append(winners, a.stored)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d changes forbidding each other's states were applied; want exactly 1: %+v", len(winners), answers)
	}
	for i, a := range answers {
		if !a.applied && a.saw != winners[0] {
			t.Errorf("writer %d was refused on %s; want the winner's %s", i, describe(a.saw), describe(winners[0]))
		}
	}
	if got, _, err := s.FindPlant(context.Background(), 141); err != nil || got != winners[0] {
		t.Fatalf("stored %s, %v; want the winner's %s", describe(got), err, describe(winners[0]))
	}
}

// oneWinnerAmongDeletesAndChangesForbiddingOneState races conditional
// deletes and changes on the condition that the plant is not in the state
// the changes leave, half of them through a second store on the same
// database when the harness has one: exactly one takes effect, and every
// other one finds what it left (no plant, or the changed one, refused).
func oneWinnerAmongDeletesAndChangesForbiddingOneState(t *testing.T, h Harness) {
	s := h.Open(t)
	other := s
	if h.Reopen != nil {
		other = h.Reopen(t, s)
	}
	mustInsert(t, s, plant(t, 142, "Original", nil))
	changed := plant(t, 142, "Changed", tag("once"))
	const callers = 32
	type answer struct {
		saw                  domain.Plant
		found, didIt, delete bool
	}
	answers := make([]answer, callers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			store := s
			if i%2 == 1 {
				store = other
			}
			a := answer{found: true, delete: i%4 < 2}
			var err error
			if a.delete {
				_, err = store.DeletePlantIf(context.Background(), 142, unless(&a.saw, changed))
			} else {
				change := application.PlantChange{Name: ptrTo(changed.Name()), Tag: ptrTo(changed.Tag())}
				_, err = store.UpdatePlant(context.Background(), 142, changeUnless(change, unless(&a.saw, changed)))
			}
			var nf *domain.NotFoundError
			switch {
			case err == nil:
				a.didIt = true
			case errors.As(err, &nf):
				a.found = false
			case !errors.Is(err, application.ErrPreconditionFailed):
				t.Errorf("caller %d: %v", i, err)
			}
			answers[i] = a
		})
	}
	close(start)
	wg.Wait()
	var winner *answer
	for i := range answers {
		if answers[i].didIt {
			if winner != nil {
				t.Fatalf("two writes forbidding one state took effect: %+v", answers)
			}
			winner = &answers[i]
		}
	}
	if winner == nil {
		t.Fatalf("no write took effect: %+v", answers)
	}
	stored, found, err := s.FindPlant(context.Background(), 142)
	switch {
	case err != nil:
		t.Fatal(err)
	case winner.delete && found, !winner.delete && (!found || stored != changed):
		t.Fatalf("after the race the store holds %s (found %v); the winner was a delete: %v", describe(stored), found, winner.delete)
	}
	for i, a := range answers {
		if !a.didIt && (a.found != found || (found && a.saw != changed)) {
			t.Errorf("caller %d answered %+v; want what the winner left", i, a)
		}
	}
}
