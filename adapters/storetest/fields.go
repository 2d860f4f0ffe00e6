package storetest

import (
	"context"
	"testing"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// keepsEveryFieldOfAPlant stores a plant with every field set, and one
// with every optional field left out, and checks that every field comes
// back from a read, a list and a create's replay, and through updates that
// set and clear them all; and that a create asking again for what a stored
// plant holds is its replay, whatever fields the server set on it.
func keepsEveryFieldOfAPlant(t *testing.T, h Harness) {
	timesAreKeptAsStoresKeepThem(t)
	s := h.Open(t)
	ctx := context.Background()
	full, bare := withEveryField(t, 140, "Full", true), withEveryField(t, 141, "Bare", false)
	for _, p := range []domain.Plant{full, bare} {
		mustInsert(t, s, p)
		stored := mustFind(t, s, p, p)
		mustFindByID(t, s, p.ID(), p, true)
		// What the create gives is what ParseNewPlant takes of the fields:
		// not those the server sets, which must stay out of SameContent.
		asked, err := domain.ParseNewPlant(stored.Fields())
		if err != nil {
			t.Fatalf("the create of %s: %v", describe(stored), err)
		}
		if !stored.SameContent(asked) {
			t.Fatalf("a create asking for %s again is not its replay (409): SameContent must leave out the fields the server sets", describe(stored))
		}
	}
	page, err := s.ListPlants(ctx, application.ListQuery{After: 139, HasAfter: true, Limit: 2})
	if want := plantjson.AppendList(nil, []domain.Plant{full, bare}); err != nil || string(page.JSON) != string(want) {
		t.Fatalf("list of both = %s, %v; want %s", page.JSON, err, want)
	}
	// Every field set, then every one cleared, through updates.
	swapped := map[domain.ID]domain.Plant{140: withEveryField(t, 140, "Full", false), 141: withEveryField(t, 141, "Bare", true)}
	for id, next := range swapped {
		got, err := s.UpdatePlant(ctx, id, func(domain.Plant) (domain.Plant, error) { return next, nil })
		if err != nil || got != next {
			t.Fatalf("UpdatePlant(%d) = %s, %v; want %s", id, describe(got), err, describe(next))
		}
		mustFindByID(t, s, id, next, true)
	}
	if h.Reopen != nil {
		other := h.Reopen(t, s)
		for id, want := range swapped {
			mustFindByID(t, other, id, want, true)
		}
	}
}
