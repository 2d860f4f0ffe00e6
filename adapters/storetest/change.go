package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// changeIf is the update a change with an expectation is, as the change
// use case builds it: the change applied to a stored plant that is expect
// (any, when expect is nil), else ErrPreconditionFailed. saw, when not nil,
// is set to the plant the update last saw.
func changeIf(c application.PlantChange, expect *domain.Plant, saw *domain.Plant) application.Update {
	return func(stored domain.Plant) (domain.Plant, error) {
		if saw != nil {
			*saw = stored
		}
		if expect != nil && stored != *expect {
			return domain.Plant{}, application.ErrPreconditionFailed
		}
		return c.Apply(stored), nil
	}
}

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
		var nf *domain.NotFoundError
		if got, err := s.UpdatePlant(context.Background(), 81, changeIf(application.PlantChange{}, expect, nil)); !errors.As(err, &nf) || nf.ID != 81 {
			t.Fatalf("UpdatePlant(81) with nothing stored = %s, %v; want not found", describe(got), err)
		}
	}
	if h.Reopen != nil {
		if got, found, err := h.Reopen(t, s).FindPlant(context.Background(), 80); err != nil || !found || got != odd {
			t.Fatalf("another store finds %s, %v, %v; want the acknowledged change", describe(got), found, err)
		}
	}
}

// An update's error is its answer, and it writes nothing; so is an answer
// of another id.
func refusesWhatAnUpdateRefuses(t *testing.T, h Harness) {
	s := h.Open(t)
	fern := plant(t, 82, "Fern", nil)
	mustInsert(t, s, fern)
	refusal := errors.New("not this one")
	if _, err := s.UpdatePlant(context.Background(), 82, func(domain.Plant) (domain.Plant, error) {
		return plant(t, 82, "Never", nil), refusal
	}); !errors.Is(err, refusal) {
		t.Fatalf("UpdatePlant with a refusing update = %v; want its error", err)
	}
	if _, err := s.UpdatePlant(context.Background(), 82, func(domain.Plant) (domain.Plant, error) {
		return plant(t, 83, "Elsewhere", nil), nil
	}); err == nil {
		t.Fatal("UpdatePlant answering another id succeeded")
	}
	mustFind(t, s, fern, fern)
	if _, found, err := s.FindPlant(context.Background(), 83); err != nil || found {
		t.Fatalf("FindPlant(83) = %v, %v; want nothing stored there", found, err)
	}
}

// appliesEveryUpdateOnceInOrder races updates that each append a letter of
// their own to one plant's name, half through a second store on the same
// database when the harness has one: every update is applied exactly once,
// each to the plant the updates before it left, so the name ends up with
// every letter once, and each answers a name that holds its letter.
func appliesEveryUpdateOnceInOrder(t *testing.T, h Harness) {
	s := h.Open(t)
	other := s
	if h.Reopen != nil {
		other = h.Reopen(t, s)
	}
	mustInsert(t, s, plant(t, 84, "Ivy ", nil))
	const writers = 24
	var wg sync.WaitGroup
	for i := range writers {
		letter := string(rune('A' + i))
		wg.Go(func() {
			store := s
			if i%2 == 1 {
				store = other
			}
			got, err := store.UpdatePlant(context.Background(), 84, func(stored domain.Plant) (domain.Plant, error) {
				name, err := domain.ParseName(stored.Name().String() + letter)
				return stored.WithName(name), err
			})
			if err != nil || !strings.Contains(got.Name().String(), letter) {
				t.Errorf("update %s = %s, %v; want a name with its letter", letter, describe(got), err)
			}
		})
	}
	wg.Wait()
	got, _, err := s.FindPlant(context.Background(), 84)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(got.Name().String(), "Ivy ")
	for i := range writers {
		if n := strings.Count(name, string(rune('A'+i))); n != 1 {
			t.Errorf("letter %c applied %d times: %q", 'A'+i, n, name)
		}
	}
	if len(name) != writers {
		t.Errorf("stored %q; want %d letters, each once", got.Name(), writers)
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
					var saw domain.Plant
					got, err := s.UpdatePlant(context.Background(), domain.ID(id), changeIf(st.change, st.expect, &saw))
					if st.applied && (err != nil || got != st.want) || !st.applied && (!errors.Is(err, application.ErrPreconditionFailed) || saw != st.want) {
						t.Errorf("id %d round %d step %d: %s (saw %s), %v; want %s, applied %v", id, r, k, describe(got), describe(saw), err, describe(st.want), st.applied)
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
				var nf *domain.NotFoundError
				if got, err := s.UpdatePlant(context.Background(), domain.ID(id), changeIf(application.PlantChange{}, nil, nil)); !errors.As(err, &nf) {
					t.Errorf("id %d round %d: change after the delete = %s, %v; want not found", id, r, describe(got), err)
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
// other sees the winner's plant.
func oneWinnerAmongChangesExpectingOnePlant(t *testing.T, h Harness) {
	s := h.Open(t)
	other := s
	if h.Reopen != nil {
		other = h.Reopen(t, s)
	}
	original := plant(t, 120, "Original", nil)
	mustInsert(t, s, original)
	const callers = 32
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
			name := plant(t, 120, fmt.Sprintf("Writer %d", i), nil).Name()
			var a answer
			var err error
			a.stored, err = store.UpdatePlant(context.Background(), 120, changeIf(application.PlantChange{Name: &name}, &original, &a.saw))
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
	for _, a := range answers {
		if a.applied {
			winners = append(winners, a.stored)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d changes expecting one plant were applied; want exactly 1: %+v", len(winners), answers)
	}
	for i, a := range answers {
		if !a.applied && a.saw != winners[0] {
			t.Errorf("writer %d saw %s; want the winner's %s", i, describe(a.saw), describe(winners[0]))
		}
	}
	if got, _, err := s.FindPlant(context.Background(), 120); err != nil || got != winners[0] {
		t.Fatalf("stored %s, %v; want the winner's %s", describe(got), err, describe(winners[0]))
	}
}

// mustChange applies c to id when the stored plant is expect (any, when
// expect is nil), and checks the answer: want stored, and whether c was
// applied or refused for the expectation.
func mustChange(t *testing.T, s Store, id domain.ID, c application.PlantChange, expect *domain.Plant, want domain.Plant, applied bool) {
	t.Helper()
	var saw domain.Plant
	got, err := s.UpdatePlant(context.Background(), id, changeIf(c, expect, &saw))
	switch {
	case applied && err != nil:
		t.Fatalf("UpdatePlant(%d): %v", id, err)
	case applied && got != want:
		t.Fatalf("UpdatePlant(%d) = %s; want %s", id, describe(got), describe(want))
	case !applied && !errors.Is(err, application.ErrPreconditionFailed):
		t.Fatalf("UpdatePlant(%d) = %s, %v; want the expectation refused", id, describe(got), err)
	case !applied && saw != want:
		t.Fatalf("UpdatePlant(%d) saw %s; want %s", id, describe(saw), describe(want))
	}
}

func ptrTo[T any](v T) *T { return &v }
