package postgres

import (
	"context"
	"testing"

	"github.com/plantstore/plantstore/domain"
)

// One gathered read answers every id it was given, in order: an id asked
// twice twice, an absent id as not found.
func TestGatheredReadAnswersEachID(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	fern, moss := record(t, 1, "Fern", "shade"), record(t, -2, "Moss", "")
	if _, _, err := s.InsertIfAbsent(ctx, fern); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.InsertIfAbsent(ctx, moss); err != nil {
		t.Fatal(err)
	}
	res := s.findBatch(ctx, []domain.ID{1, 3, -2, 1})
	want := []found{{fern.Plant, true}, {}, {moss.Plant, true}, {fern.Plant, true}}
	for i, w := range want {
		if res[i].Err != nil || res[i].Value != w {
			t.Errorf("read %d = %+v, %v; want %+v", i, res[i].Value, res[i].Err, w)
		}
	}
}
