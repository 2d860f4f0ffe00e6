package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// Every plant's stored item is its PlantItem as the service encodes it,
// whoever wrote the plant; one stored before items were kept (item NULL)
// lists with the same bytes, rendered by the query.
func TestStoredItemsFollowEveryWrite(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	names := map[int64][2]string{
		1: {`Monstera "Thai" \ Constellation`, "aroid"},
		2: {"Café 🌵 line\u2028separator <b>&</b>", ""},
		3: {"Pilea", `{"id":7}`},
	}
	for id, nt := range names {
		if _, _, err := s.InsertIfAbsent(ctx, record(t, id, nt[0], nt[1])); err != nil {
			t.Fatal(err)
		}
	}
	// Written around the service: a renamed plant, a tag removed.
	if _, err := s.db.Exec(`UPDATE plants SET name = 'Pilea peperomioides', tag = NULL WHERE id = 3`); err != nil {
		t.Fatal(err)
	}
	names[3] = [2]string{"Pilea peperomioides", ""}
	expectItems(t, s, names)

	// Plants stored before items were kept.
	if _, err := s.db.Exec(`UPDATE plants SET item = NULL WHERE id IN (1, 3)`); err != nil {
		t.Fatal(err)
	}
	expectItems(t, s, names, 1, 3)
}

// expectItems checks every stored item but those of unkept, which must have
// none, and the page that lists them all, against the service's encoder.
func expectItems(t *testing.T, s *Store, names map[int64][2]string, unkept ...int64) {
	t.Helper()
	var want []domain.Plant
	for id := range int64(len(names)) {
		nt := names[id+1]
		want = append(want, record(t, id+1, nt[0], nt[1]).Plant)
		var item *string
		if err := s.db.Get(&item, `SELECT item FROM plants WHERE id = $1`, id+1); err != nil {
			t.Fatal(err)
		}
		encoded := string(plantjson.AppendItem(nil, want[id]))
		switch {
		case slices.Contains(unkept, id+1):
			if item != nil {
				t.Errorf("plant %d keeps item %s; want none", id+1, *item)
			}
		case item == nil || *item != encoded:
			t.Errorf("plant %d keeps item %v; want %s", id+1, item, encoded)
		}
	}
	page, err := s.ListPlants(context.Background(), application.ListQuery{Limit: 10})
	if wantJSON := plantjson.AppendList(nil, want); err != nil || string(page.JSON) != string(wantJSON) {
		t.Fatalf("page %s, %v; want %s", page.JSON, err, wantJSON)
	}
}
