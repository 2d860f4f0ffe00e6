package storetest

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/domain"
)

func findsStoredPlantsByID(t *testing.T, h Harness) {
	s := h.Open(t)
	stored := []domain.Plant{
		plant(t, math.MinInt64, "Min", nil),
		plant(t, 0, "  Zero  ", tag("Caf\u00e9")),
		plant(t, math.MaxInt64, strings.Repeat("🌵", domain.MaxNameLength), tag(strings.Repeat("t", domain.MaxTagLength))),
	}
	for _, p := range stored {
		mustInsert(t, s, p)
	}
	for _, p := range stored {
		mustFindByID(t, s, p.ID(), p, true)
	}
	mustFindByID(t, s, 1, domain.Plant{}, false)
	mustDelete(t, s, 0, true)
	mustFindByID(t, s, 0, domain.Plant{}, false)
}

// findsEveryAcknowledgedCreateAtOnce reads each plant right after its create
// returned, from many goroutines: an acknowledged create is visible to every
// read that follows it.
func findsEveryAcknowledgedCreateAtOnce(t *testing.T, h Harness) {
	s := h.Open(t)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			p := plant(t, int64(500+i), "Sorrel", nil)
			if _, _, err := s.InsertIfAbsent(context.Background(), record(p)); err != nil {
				t.Errorf("InsertIfAbsent: %v", err)
				return
			}
			got, found, err := s.FindPlant(context.Background(), p.ID())
			if err != nil || !found || got != p {
				t.Errorf("FindPlant(%d) right after its create = %s, %v, %v", p.ID(), describe(got), found, err)
			}
		})
	}
	wg.Wait()
}

// mustFindByID reads id and compares it with want, byte for byte.
func mustFindByID(t *testing.T, s Store, id domain.ID, want domain.Plant, wantFound bool) {
	t.Helper()
	got, found, err := s.FindPlant(context.Background(), id)
	if err != nil {
		t.Fatalf("FindPlant(%d): %v", id, err)
	}
	if found != wantFound || (found && got != want) {
		t.Fatalf("FindPlant(%d) = %s, %v; want %s, %v", id, describe(got), found, describe(want), wantFound)
	}
}
