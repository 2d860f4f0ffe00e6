package httpapi

import (
	"context"
	"errors"
	"testing"

	"github.com/plantstore/plantstore/client"
)

// Every plant the client lists, and every event's plant, carries the ETag
// that GET /plants/{id} answers for that state, whatever the characters of
// its name and tag (escaped or not in the JSON the service renders): for an
// event, the latest event of a plant that still exists. A listed ETag is
// good for a conditional write with no Get first.
func TestClientListedPlantsCarryTheETagGetAnswers(t *testing.T) {
	ctx := context.Background()
	s := startServer(t)
	c, _ := s.plantClient(t, s.token(t, nil))
	for _, p := range []client.NewPlant{
		{ID: -9, Name: "Aloe"},
		{ID: 0, Name: `Fern "the <green> & \ one"`, Tag: "shade"},
		{ID: 3, Name: "Café 🌵 \u2028 Zoë", Tag: "日本"},
		{ID: 4, Name: "Basil", Tag: "herb"},
		{ID: 1 << 62, Name: "Moss"},
	} {
		if _, err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Change(ctx, 3, client.Patch{}.SetName("Ivy </script>").RemoveTag()); err != nil {
		t.Fatal(err)
	}
	beforeDelete, err := c.Get(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, 4); err != nil {
		t.Fatal(err)
	}

	listed := 0
	for p, err := range c.List(ctx, client.ListOptions{PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		listed++
		if read, err := c.Get(ctx, p.ID); err != nil || p.ETag == "" || p != read {
			t.Errorf("listed %+v; GET answers %+v %v", p, read, err)
		}
	}
	if listed != 4 {
		t.Fatalf("listed %d plants, want 4", listed)
	}

	latest := map[int64]client.Event{}
	for e, err := range c.Feed(client.FeedOptions{PageSize: 3}).Events(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		latest[e.Plant.ID] = e
	}
	for id, e := range latest {
		read, err := c.Get(ctx, id)
		switch {
		case errors.Is(err, client.ErrNotFound) && e.Type == client.PlantDeleted:
			// The state it had when it was deleted, as GET answered it then.
			if e.Plant != beforeDelete {
				t.Errorf("the delete's plant %+v; GET answered %+v before it", e.Plant, beforeDelete)
			}
		case err != nil || e.Plant.ETag == "" || e.Plant != read:
			t.Errorf("the latest event of %d holds %+v; GET answers %+v %v", id, e.Plant, read, err)
		}
	}
	if len(latest) != 5 {
		t.Fatalf("the feed has events of %d plants, want 5", len(latest))
	}

	// A conditional change of a listed plant, with the ETag it was listed
	// with: no Get needed, and a stale one is refused.
	page, err := c.ListPage(ctx, client.ListOptions{PageSize: 1})
	if err != nil || len(page.Plants) != 1 {
		t.Fatalf("list: %+v %v", page, err)
	}
	p := page.Plants[0]
	if _, err := c.Change(ctx, p.ID, client.Patch{}.SetTag("dry"), client.IfMatch(p.ETag)); err != nil {
		t.Fatalf("change if match the listed ETag: %v", err)
	}
	if err := c.Delete(ctx, p.ID, client.IfMatch(p.ETag)); !errors.Is(err, client.ErrPreconditionFailed) {
		t.Fatalf("delete if match the ETag listed before the change: %v", err)
	}
}
