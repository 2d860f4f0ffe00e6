package storetest

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func listsInIDOrder(t *testing.T, h Harness) {
	s := h.Open(t)
	ids := []int64{5, math.MaxInt64, -1, 0, math.MinInt64, 1 << 40, -(1 << 40), 2}
	want := make([]domain.Plant, len(ids))
	for i, id := range ids {
		want[i] = plant(t, id, "Café 🌵 "+string(rune('a'+i)), tag("t"))
		mustInsert(t, s, want[i])
	}
	slices.SortFunc(want, func(a, b domain.Plant) int { return cmp.Compare(a.ID(), b.ID()) })
	expectList(t, s, application.ListQuery{Limit: 1000}, want)
	expectList(t, s, application.ListQuery{Limit: 3}, want[:3])
	expectList(t, s, application.ListQuery{Limit: 1}, want[:1])
}

func listsAfterAnID(t *testing.T, h Harness) {
	s := h.Open(t)
	var all []domain.Plant
	for _, id := range []int64{math.MinInt64, -3, 0, 4, 9, math.MaxInt64} {
		p := plant(t, id, "Aster", nil)
		mustInsert(t, s, p)
		all = append(all, p)
	}
	after := func(id int64, limit int) application.ListQuery {
		return application.ListQuery{After: domain.ID(id), HasAfter: true, Limit: limit}
	}
	expectList(t, s, after(math.MinInt64, 100), all[1:])
	expectList(t, s, after(-3, 100), all[2:])
	expectList(t, s, after(-2, 2), all[2:4]) // after an id that is not stored
	expectList(t, s, after(9, 100), all[5:])
	expectList(t, s, after(math.MaxInt64-1, 100), all[5:])
	expectList(t, s, after(math.MaxInt64, 100), nil)
	// A deleted plant is not listed.
	mustDelete(t, s, 4, true)
	expectList(t, s, after(0, 100), all[4:])
}

func listsByExactTag(t *testing.T, h Harness) {
	s := h.Open(t)
	tagged := []domain.Plant{plant(t, 1, "a1", tag("fern")), plant(t, 4, "a4", tag("fern")), plant(t, 9, "a9", tag("fern"))}
	for _, p := range tagged {
		mustInsert(t, s, p)
	}
	for i, other := range []*string{tag("Fern"), tag("fern "), tag(" fern"), tag("ferns"), nil, tag("fërn")} {
		mustInsert(t, s, plant(t, int64(10+i), "other", other))
	}
	fern, _ := domain.ParseTag("fern")
	expectList(t, s, application.ListQuery{Tag: fern, Limit: 100}, tagged)
	expectList(t, s, application.ListQuery{Tag: fern, Limit: 2}, tagged[:2])
	expectList(t, s, application.ListQuery{Tag: fern, After: 4, HasAfter: true, Limit: 100}, tagged[2:])
	none, _ := domain.ParseTag("cactus")
	expectList(t, s, application.ListQuery{Tag: none, Limit: 100}, nil)
}

func listsNothingFromAnEmptyStore(t *testing.T, h Harness) {
	s := h.Open(t)
	expectList(t, s, application.ListQuery{Limit: 100}, nil)
}

// walksEveryStablePlantOnceWhileOthersChange pages through the store with a
// small limit while plants between the stable ones are created and deleted:
// keyset pages list every plant that existed for the whole walk exactly
// once, in ascending id order.
func walksEveryStablePlantOnceWhileOthersChange(t *testing.T, h Harness) {
	s := h.Open(t)
	const n = 300
	for i := range n {
		mustInsert(t, s, plant(t, int64(2*i), "stable", nil))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := int64(2*rng.IntN(n+10) + 1) // odd: never a stable id
				if rng.IntN(2) == 0 {
					_, _, _ = s.InsertIfAbsent(context.Background(), record(plant(t, id, "churn", nil)))
				} else {
					_, _ = s.DeletePlant(context.Background(), domain.ID(id))
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()

	seen := make(map[domain.ID]int)
	q := application.ListQuery{Limit: 7}
	last := domain.ID(math.MinInt64)
	for pages := 0; ; pages++ {
		if pages > 2*n {
			t.Fatal("the walk does not end")
		}
		page, err := s.ListPlants(context.Background(), q)
		if err != nil {
			t.Fatalf("ListPlants: %v", err)
		}
		for _, p := range page {
			if q.HasAfter && p.ID() <= last {
				t.Fatalf("id %d listed after %d", p.ID(), last)
			}
			last = p.ID()
			seen[p.ID()]++
		}
		if len(page) < q.Limit {
			break
		}
		q.After, q.HasAfter = last, true
	}
	for i := range n {
		if c := seen[domain.ID(2*i)]; c != 1 {
			t.Errorf("stable plant %d listed %d times, want once", 2*i, c)
		}
	}
}

// expectList lists q and compares the page with want, byte for byte.
func expectList(t *testing.T, s Store, q application.ListQuery, want []domain.Plant) {
	t.Helper()
	got, err := s.ListPlants(context.Background(), q)
	if err != nil {
		t.Fatalf("ListPlants(%+v): %v", q, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ListPlants(%+v) = %s; want %s", q, describeAll(got), describeAll(want))
	}
}

func describeAll(ps []domain.Plant) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = describe(p)
	}
	return out
}
