package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// storedItem is the item stored with the plant of id; not Valid when none.
func storedItem(t *testing.T, s *Store, id domain.ID) sql.NullString {
	t.Helper()
	var item sql.NullString
	if err := s.read.Get(&item, `SELECT item FROM plants WHERE id = ?`, int64(id)); err != nil {
		t.Fatal(err)
	}
	return item
}

// Every write of a plant by the service stores the plant as the service
// renders it; an update that changes nothing writes nothing.
func TestEveryWriteStoresTheRenderedItem(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p := mustPlant(t, -7, `Fern "the \ one" é 🌵`+"\u2028", ptr("<shade>"))
	if _, _, err := s.InsertIfAbsent(ctx, recordOf(p)); err != nil {
		t.Fatal(err)
	}
	if got, want := storedItem(t, s, p.ID()).String, string(plantjson.AppendItem(nil, p)); got != want {
		t.Errorf("item after the create = %s, want %s", got, want)
	}
	renamed := p.WithTag(domain.NoTag)
	if _, err := s.UpdatePlant(ctx, p.ID(), func(domain.Plant) (domain.Plant, error) { return renamed, nil }); err != nil {
		t.Fatal(err)
	}
	if got, want := storedItem(t, s, p.ID()).String, string(plantjson.AppendItem(nil, renamed)); got != want {
		t.Errorf("item after the update = %s, want %s", got, want)
	}
}

// insertAround stores a plant as a write around the service would: its
// fields, and no item.
func insertAround(t *testing.T, s *Store, id int64, name string, tag any) {
	t.Helper()
	if _, err := s.write.Exec(`INSERT INTO plants (id, name, tag, created_by, created_at) VALUES (?, ?, ?, 'sql', '')`, id, name, tag); err != nil {
		t.Fatal(err)
	}
}

// Plants stored without their item, before the column existed or around
// the service, are listed and found as the service renders them, beside
// plants that have theirs, and get it with their next write.
func TestPlantsWithoutTheirItemAreRenderedWhenRead(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	var plants []domain.Plant
	for id := range int64(10) {
		var tag *string
		if id%3 == 0 {
			tag = ptr("fern")
		}
		p := mustPlant(t, id, "Plant é "+string(rune('a'+id)), tag)
		plants = append(plants, p)
		if id%2 == 0 {
			var tagArg any
			if tag != nil {
				tagArg = *tag
			}
			insertAround(t, s, id, p.Name().String(), tagArg)
		} else if _, _, err := s.InsertIfAbsent(ctx, recordOf(p)); err != nil {
			t.Fatal(err)
		}
	}
	fern, _ := domain.ParseTag("fern")
	for _, c := range []struct {
		q    application.ListQuery
		want []domain.Plant
		more bool
	}{
		{application.ListQuery{Limit: 100}, plants, false},
		{application.ListQuery{Limit: 4}, plants[:4], true},
		{application.ListQuery{Limit: 3, After: 3, HasAfter: true}, plants[4:7], true},
		{application.ListQuery{Limit: 100, Tag: fern}, []domain.Plant{plants[0], plants[3], plants[6], plants[9]}, false},
		{application.ListQuery{Limit: 1, Tag: fern}, plants[:1], true},
	} {
		expectPage(t, s, c.q, c.want, c.more)
	}
	for _, p := range plants {
		if got, found, err := s.FindPlant(ctx, p.ID()); err != nil || !found || got != p {
			t.Errorf("FindPlant(%d) = %v, %v, %v; want %v", p.ID(), got, found, err, p)
		}
	}
	if _, err := s.UpdatePlant(ctx, 0, func(p domain.Plant) (domain.Plant, error) { return p.WithTag(domain.NoTag), nil }); err != nil {
		t.Fatal(err)
	}
	if got := storedItem(t, s, 0); !got.Valid {
		t.Error("an update of a plant without its item stored none")
	}
}

// expectPage lists q and compares the page with want, byte for byte with
// the service's own encoder.
func expectPage(t *testing.T, s *Store, q application.ListQuery, want []domain.Plant, more bool) {
	t.Helper()
	page, err := s.ListPlants(context.Background(), q)
	if err != nil {
		t.Fatalf("ListPlants(%+v): %v", q, err)
	}
	if wantJSON := plantjson.AppendList(nil, want); !bytes.Equal(page.JSON, wantJSON) {
		t.Errorf("ListPlants(%+v) = %s, want %s", q, page.JSON, wantJSON)
	}
	if page.Count != len(want) || page.More != more || (len(want) > 0 && page.Last != want[len(want)-1].ID()) {
		t.Errorf("ListPlants(%+v): count %d, last %d, more %v; want %d plants, more %v", q, page.Count, page.Last, page.More, len(want), more)
	}
}

// An UPDATE around the service clears the item, whatever columns it set,
// so that the plant is rendered as it now is: the trigger names no column,
// and a new one needs nothing of it. A service's write keeps its item.
func TestAnUpdateAroundTheServiceClearsTheItem(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	fern := mustPlant(t, 1, "Fern", ptr("green"))
	if _, _, err := s.InsertIfAbsent(ctx, recordOf(fern)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePlant(ctx, 1, func(p domain.Plant) (domain.Plant, error) { return p.WithName(mustName(t, "Fern tree")), nil }); err != nil {
		t.Fatal(err)
	}
	if !storedItem(t, s, 1).Valid {
		t.Error("the service's update cleared the item it wrote")
	}
	for _, set := range []string{`name = 'Moss'`, `tag = NULL`, `id = 2`} {
		if _, err := s.write.Exec(`UPDATE plants SET ` + set); err != nil {
			t.Fatal(err)
		}
	}
	moss := mustPlant(t, 2, "Moss", nil)
	expectPage(t, s, application.ListQuery{Limit: 10}, []domain.Plant{moss}, false)
	if storedItem(t, s, 2).Valid {
		t.Error("the stale item was kept")
	}
}

// A stored plant that breaks the plant rules, written around the service
// and without its item, fails the pages that hold it, as it fails a read
// by id, rather than being served.
func TestAPageWithABadRowIsAFault(t *testing.T) {
	s := newStore(t)
	insertAround(t, s, 1, "bad\a", nil)
	_, err := s.ListPlants(context.Background(), application.ListQuery{Limit: 10})
	if err == nil || errors.Is(err, application.ErrUnavailable) {
		t.Errorf("ListPlants over a bad row = %v, want a fault", err)
	}
}

func mustName(t *testing.T, s string) domain.Name {
	t.Helper()
	n, err := domain.ParseName(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
