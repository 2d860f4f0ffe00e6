package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/plantstore/plantstore/application"
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

// One gathered list query answers each list with its own page: its lower
// bound, its limit and its tag.
func TestGatheredListsAnswerEachList(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	for id := int64(1); id <= 9; id++ {
		tag := ""
		if id%3 == 0 {
			tag = "fern"
		}
		if _, _, err := s.InsertIfAbsent(ctx, record(t, id, "p", tag)); err != nil {
			t.Fatal(err)
		}
	}
	fern, _ := domain.ParseTag("fern")
	moss, _ := domain.ParseTag("moss")
	qs := []application.ListQuery{
		{Limit: 3},
		{Limit: 2, After: 4, HasAfter: true},
		{Limit: 5, Tag: fern},
		{Limit: 1, Tag: fern, After: 3, HasAfter: true},
		{Limit: 4, Tag: moss},
		{Limit: 100, After: 8, HasAfter: true},
	}
	want := [][]domain.ID{{1, 2, 3}, {5, 6}, {3, 6, 9}, {6}, {}, {9}}
	res := s.listBatch(ctx, qs)
	for i, w := range want {
		var items []struct{ ID domain.ID }
		if err := json.Unmarshal(res[i].Value.JSON, &items); err != nil {
			t.Fatalf("list %d: %s: %v", i, res[i].Value.JSON, err)
		}
		var got []domain.ID
		for _, it := range items {
			got = append(got, it.ID)
		}
		if res[i].Err != nil || len(got) != len(w) || (len(w) > 0 && !slices.Equal(got, w)) {
			t.Errorf("list %d (%+v) = %v, %v; want %v", i, qs[i], got, res[i].Err, w)
		}
	}
}
