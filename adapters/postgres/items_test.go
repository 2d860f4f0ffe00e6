package postgres

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// Every plant the service writes keeps its PlantItem as the service
// encodes it. A write around the service leaves none rather than a stale
// one, and a plant without one (written so, or stored before items were
// kept) lists with the same bytes, rendered in Go.
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
	expectItems(t, s, names, 3)

	// A plant stored before items were kept.
	if _, err := s.db.Exec(`UPDATE plants SET item = NULL WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	expectItems(t, s, names, 1, 3)
	// The service's next write of it keeps its item again.
	if _, err := s.UpdatePlant(ctx, 3, func(p domain.Plant) (domain.Plant, error) { return p.WithTag(mustTag(t, "pilea")), nil }); err != nil {
		t.Fatal(err)
	}
	names[3] = [2]string{"Pilea peperomioides", "pilea"}
	expectItems(t, s, names, 1)
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

func mustTag(t *testing.T, s string) domain.Tag {
	t.Helper()
	tag, err := domain.ParseTag(s)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}

// A write around the service advances the plant's version, so that an
// update by function decided on the version before it is decided again,
// and never writes over it.
func TestAWriteAroundTheServiceAdvancesTheVersion(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	if _, _, err := s.InsertIfAbsent(ctx, record(t, 1, "Fern", "")); err != nil {
		t.Fatal(err)
	}
	calls := 0
	got, err := s.UpdatePlant(ctx, 1, func(p domain.Plant) (domain.Plant, error) {
		calls++
		if calls == 1 { // between the read and the write
			if _, err := s.db.Exec(`UPDATE plants SET tag = 'outside' WHERE id = 1`); err != nil {
				t.Fatal(err)
			}
		}
		return p.WithName(mustName(t, "Fern "+p.Tag().String())), nil
	})
	if err != nil || calls != 2 || got.Name().String() != "Fern outside" || got.Tag().String() != "outside" {
		t.Fatalf("UpdatePlant over a write around the service = %s %s, %v after %d calls; want it decided again on that write", got.Name(), got.Tag(), err, calls)
	}
	// Each write gave the row a version of its own: the create, the write
	// around the service, the update, and now the delete and a create of
	// the id again.
	versions := map[int64]bool{}
	for range 2 {
		var version int64
		if err := s.db.Get(&version, `SELECT version FROM plants WHERE id = 1`); err != nil {
			t.Fatal(err)
		}
		versions[version] = true
		if _, err := s.DeletePlant(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.InsertIfAbsent(ctx, record(t, 1, "Fern", "")); err != nil {
			t.Fatal(err)
		}
	}
	var version int64
	if err := s.db.Get(&version, `SELECT version FROM plants WHERE id = 1`); err != nil || versions[version] || len(versions) != 2 {
		t.Fatalf("version %d, %v, after %v: want a version no other state of the id had", version, err, versions)
	}
}

// An event written as the previous release wrote it, with the plant's name
// and tag and no item, gets its item, and is claimed with it.
func TestAnEventOfThePreviousReleaseGetsItsItem(t *testing.T) {
	const url = "http://receiver.example/hook"
	s, _ := newStore(t, func(c *Config) { c.Receivers = []string{url} })
	ctx := context.Background()
	if _, err := s.db.Exec(`INSERT INTO webhook_event_batches (url, created_at, event_ids, plant_ids, names, tags)
		VALUES ($1, now(), '{msg_a,msg_b}', '{1,2}', '{"Fern \"Boston\"",Moss}', '{green,NULL}')`, url); err != nil {
		t.Fatal(err)
	}
	events, err := s.ClaimDue(ctx, url, time.Now().Add(time.Second), time.Minute, 10)
	if err != nil || len(events) != 2 {
		t.Fatalf("claimed %d events, %v; want 2", len(events), err)
	}
	want := map[string]domain.Plant{"msg_a": record(t, 1, `Fern "Boston"`, "green").Plant, "msg_b": record(t, 2, "Moss", "").Plant}
	for _, e := range events {
		if p, ok := want[e.ID]; !ok || string(e.Item) != string(plantjson.AppendItem(nil, p)) || e.PlantID != p.ID() {
			t.Errorf("event %s of plant %d: %s; want %s", e.ID, e.PlantID, e.Item, plantjson.AppendItem(nil, p))
		}
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
