package storetest

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
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
	expectList(t, s, application.ListQuery{Limit: 1000}, want, false)
	expectList(t, s, application.ListQuery{Limit: 3}, want[:3], true)
	expectList(t, s, application.ListQuery{Limit: 1}, want[:1], true)
	expectList(t, s, application.ListQuery{Limit: len(want)}, want, false)
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
	expectList(t, s, after(math.MinInt64, 100), all[1:], false)
	expectList(t, s, after(-3, 100), all[2:], false)
	expectList(t, s, after(-2, 2), all[2:4], true) // after an id that is not stored
	expectList(t, s, after(9, 100), all[5:], false)
	expectList(t, s, after(math.MaxInt64-1, 100), all[5:], false)
	expectList(t, s, after(math.MaxInt64, 100), nil, false)
	// A deleted plant is not listed.
	mustDelete(t, s, 4, true)
	expectList(t, s, after(0, 100), all[4:], false)
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
	expectList(t, s, application.ListQuery{Tag: fern, Limit: 100}, tagged, false)
	expectList(t, s, application.ListQuery{Tag: fern, Limit: 2}, tagged[:2], true)
	expectList(t, s, application.ListQuery{Tag: fern, After: 4, HasAfter: true, Limit: 100}, tagged[2:], false)
	none, _ := domain.ParseTag("cactus")
	expectList(t, s, application.ListQuery{Tag: none, Limit: 100}, nil, false)
}

func listsNothingFromAnEmptyStore(t *testing.T, h Harness) {
	s := h.Open(t)
	expectList(t, s, application.ListQuery{Limit: 100}, nil, false)
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
		for _, it := range decodePage(t, page) {
			if q.HasAfter && domain.ID(it.ID) <= last {
				t.Fatalf("id %d listed after %d", it.ID, last)
			}
			last = domain.ID(it.ID)
			seen[last]++
		}
		if !page.More {
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

// expectList lists q and compares the page with want, byte for byte
// against the service's own encoder, and with more.
func expectList(t *testing.T, s Store, q application.ListQuery, want []domain.Plant, more bool) {
	t.Helper()
	got, err := s.ListPlants(context.Background(), q)
	if err != nil {
		t.Fatalf("ListPlants(%+v): %v", q, err)
	}
	wantJSON := plantjson.AppendList(nil, want)
	if !bytes.Equal(got.JSON, wantJSON) {
		t.Fatalf("ListPlants(%+v) = %s; want %s", q, got.JSON, wantJSON)
	}
	var last domain.ID
	if len(want) > 0 {
		last = want[len(want)-1].ID()
	}
	if got.Count != len(want) || (len(want) > 0 && got.Last != last) || got.More != more {
		t.Fatalf("ListPlants(%+v): count %d, last %d, more %v; want %d, %d, %v",
			q, got.Count, got.Last, got.More, len(want), last, more)
	}
	decodePage(t, got)
}

// decodePage reads a page's JSON back as a client would, and checks that it
// holds Count plants and ends with Last.
func decodePage(t *testing.T, page application.Page) []plantjson.Item {
	t.Helper()
	var items []plantjson.Item
	if err := json.Unmarshal(page.JSON, &items); err != nil {
		t.Fatalf("page %s: %v", page.JSON, err)
	}
	if len(items) != page.Count || (page.Count > 0 && domain.ID(items[page.Count-1].ID) != page.Last) {
		t.Fatalf("page %s: count %d, last %d", page.JSON, page.Count, page.Last)
	}
	return items
}
