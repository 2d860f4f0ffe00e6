package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func deletesAStoredPlant(t *testing.T, h Harness) {
	s := h.Open(t)
	p := plant(t, 60, "Begonia", tag("shade"))
	mustInsert(t, s, p)
	mustDelete(t, s, 60, true)
	mustDelete(t, s, 60, false)
	mustDelete(t, s, 61, false) // never stored
	mustInsert(t, s, p)         // absent again, so stored again
}

func freesADeletedID(t *testing.T, h Harness) {
	s := h.Open(t)
	old := plant(t, 62, "Old", tag("gone"))
	replacement := plant(t, 62, "New", nil)
	mustInsert(t, s, old)
	mustDelete(t, s, 62, true)
	mustInsert(t, s, replacement)
	// The id now holds the new plant: the old content is a conflict.
	mustFind(t, s, old, replacement)
}

// keepsEveryCountUnderRacingCreatesAndDeletes races creates and deletes of
// one id. Whatever order they take effect in, each create that stored a
// plant and each delete that removed one changed the state, so the stored
// count must end at creates minus deletes, 0 or 1, and nothing may fail.
func keepsEveryCountUnderRacingCreatesAndDeletes(t *testing.T, h Harness) {
	s := h.Open(t)
	const callers = 64
	contents := []domain.Plant{plant(t, 63, "Fern", nil), plant(t, 63, "Moss", tag("green"))}
	var (
		mu                sync.Mutex
		inserted, deleted int
		wg                sync.WaitGroup
	)
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			var did bool
			var err error
			if i%2 == 0 {
				_, did, err = s.InsertIfAbsent(context.Background(), record(contents[i/2%2]))
			} else {
				did, err = s.DeletePlant(context.Background(), 63)
			}
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case did && i%2 == 0:
				inserted++
			case did:
				deleted++
			}
		})
	}
	close(start)
	wg.Wait()
	stored := 0
	if removed, err := s.DeletePlant(context.Background(), 63); err != nil {
		t.Fatal(err)
	} else if removed {
		stored = 1
	}
	if inserted-deleted != stored {
		t.Fatalf("%d creates stored the plant and %d deletes removed it, yet %d is stored", inserted, deleted, stored)
	}
}

func keepsAcknowledgedDeletes(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("the harness cannot open a second store on the same database")
	}
	s := h.Open(t)
	for i := range 10 {
		mustInsert(t, s, plant(t, int64(70+i), "Ivy", nil))
	}
	for i := 0; i < 10; i += 2 {
		mustDelete(t, s, domain.ID(70+i), true)
	}
	other := h.Reopen(t, s)
	for i := range 10 {
		mustDelete(t, other, domain.ID(70+i), i%2 == 1)
	}
}

// mustDelete deletes id and checks whether a plant was there.
func mustDelete(t *testing.T, s Store, id domain.ID, want bool) {
	t.Helper()
	deleted, err := s.DeletePlant(context.Background(), id)
	if err != nil {
		t.Fatalf("DeletePlant(%d): %v", id, err)
	}
	if deleted != want {
		t.Fatalf("DeletePlant(%d) = %v, want %v", id, deleted, want)
	}
}

// deleteIf is the check a conditional delete is: the stored plant must be
// expect, else ErrPreconditionFailed. saw, when not nil, is set to the
// plant the check last saw.
func deleteIf(expect domain.Plant, saw *domain.Plant) application.Check {
	return func(stored domain.Plant) error {
		if saw != nil {
			*saw = stored
		}
		if stored != expect {
			return application.ErrPreconditionFailed
		}
		return nil
	}
}

func deletesOnlyTheExpectedPlant(t *testing.T, h Harness) {
	s := h.Open(t)
	p := plant(t, 130, "Begonia", tag("shade"))
	other := plant(t, 130, "Begonia", nil)
	mustInsert(t, s, p)
	var saw domain.Plant
	if _, err := s.DeletePlantIf(context.Background(), 130, deleteIf(other, &saw)); !errors.Is(err, application.ErrPreconditionFailed) || saw != p {
		t.Fatalf("DeletePlantIf(another plant) saw %s, %v; want the stored plant, kept", describe(saw), err)
	}
	if deleted, err := s.DeletePlantIf(context.Background(), 130, deleteIf(p, nil)); err != nil || deleted != p {
		t.Fatalf("DeletePlantIf(the stored plant) = %s, %v; want it deleted", describe(deleted), err)
	}
	var nf *domain.NotFoundError
	if _, err := s.DeletePlantIf(context.Background(), 130, deleteIf(p, nil)); !errors.As(err, &nf) {
		t.Fatalf("DeletePlantIf(a deleted plant) = %v; want not found", err)
	}
	mustDelete(t, s, 130, false)
}

// oneWinnerAmongDeletesAndChangesExpectingOnePlant races conditional
// deletes and changes that all expect the plant as first stored, half of
// them through a second store on the same database when the harness has
// one: exactly one takes effect, and every other one finds what it left.
func oneWinnerAmongDeletesAndChangesExpectingOnePlant(t *testing.T, h Harness) {
	s := h.Open(t)
	other := s
	if h.Reopen != nil {
		other = h.Reopen(t, s)
	}
	original := plant(t, 131, "Original", nil)
	mustInsert(t, s, original)
	const callers = 32
	type answer struct {
		saw           domain.Plant
		found, didIt  bool
		deleteNotEdit bool
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
			a := answer{found: true}
			var err error
			if i%4 < 2 {
				a.deleteNotEdit = true
				_, err = store.DeletePlantIf(context.Background(), 131, deleteIf(original, &a.saw))
			} else {
				name := plant(t, 131, "Changed", nil).Name()
				_, err = store.UpdatePlant(context.Background(), 131, changeIf(application.PlantChange{Name: &name}, &original, &a.saw))
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
				t.Fatalf("two writes expecting one plant took effect: %+v", answers)
			}
			winner = &answers[i]
		}
	}
	if winner == nil {
		t.Fatalf("no write expecting the stored plant took effect: %+v", answers)
	}
	stored, found, err := s.FindPlant(context.Background(), 131)
	if err != nil || found == winner.deleteNotEdit {
		t.Fatalf("after the race the store holds %s, %v, %v; the winner was a delete: %v", describe(stored), found, err, winner.deleteNotEdit)
	}
	for i, a := range answers {
		if !a.didIt && (a.found != found || (found && a.saw != stored)) {
			t.Errorf("caller %d answered %+v; want what the winner left", i, a)
		}
	}
}
