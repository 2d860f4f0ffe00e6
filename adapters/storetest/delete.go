package storetest

import (
	"context"
	"sync"
	"testing"

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
