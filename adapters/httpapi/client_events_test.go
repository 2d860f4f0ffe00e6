package httpapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/client"
)

// The client's Feed walks the event feed page by page to its end, keeps
// its cursor, and a later walk yields exactly the writes committed since;
// a cursor past the retention is ErrFeedExpired.
func TestClientFeed(t *testing.T) {
	ctx := context.Background()
	s := startServer(t, withStore(memory.New()))
	c, _ := s.plantClient(t, s.token(t, nil))
	walk := func(f *client.Feed) []string {
		t.Helper()
		var got []string
		for e, err := range f.Events(ctx) {
			if err != nil {
				t.Fatalf("feed: %v", err)
			}
			if e.ID != fmt.Sprintf("evt_%d", e.Number) || e.Time.IsZero() {
				t.Fatalf("event %+v", e)
			}
			got = append(got, fmt.Sprintf("%s %d %s %q", e.Type, e.Plant.ID, e.Plant.Name, e.Plant.Tag))
		}
		return got
	}
	for id := range int64(5) {
		if _, err := c.Create(ctx, client.NewPlant{ID: id, Name: "Fern", Tag: "shade"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Change(ctx, 2, client.Patch{}.SetName("Moss").RemoveTag()); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, 3); err != nil {
		t.Fatal(err)
	}
	f := c.Feed("", 2)
	got := walk(f)
	want := []string{
		`plant.created 0 Fern "shade"`, `plant.created 1 Fern "shade"`, `plant.created 2 Fern "shade"`,
		`plant.created 3 Fern "shade"`, `plant.created 4 Fern "shade"`, `plant.changed 2 Moss ""`, `plant.deleted 3 Fern "shade"`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first walk %q, want %q", got, want)
	}
	if again := walk(f); len(again) != 0 {
		t.Fatalf("a walk with nothing new yields %q", again)
	}
	if _, err := c.Create(ctx, client.NewPlant{ID: 3, Name: "Ivy"}); err != nil {
		t.Fatal(err)
	}
	// A Feed made from the saved cursor goes on where the other stopped.
	if got := walk(c.Feed(f.Cursor(), 0)); fmt.Sprint(got) != fmt.Sprint([]string{`plant.created 3 Ivy ""`}) {
		t.Fatalf("after the cursor: %q", got)
	}
	// A break on a page's last event moves past the page; one before it
	// leaves the cursor at the page's start.
	g := c.Feed("", 2)
	for range g.Events(ctx) {
		break
	}
	if first := walk(g); len(first) != 8 {
		t.Fatalf("after a break on the first event: %q, want every event again", first)
	}
	h := c.Feed("", 2)
	n := 0
	for range h.Events(ctx) {
		if n++; n == 2 {
			break
		}
	}
	if rest := walk(h); len(rest) != 6 {
		t.Fatalf("after a break on a page's last event: %q, want the 6 that follow", rest)
	}

	old := formatCursor(application.FeedPosition{At: time.Now().Add(-169 * time.Hour)})
	yielded := 0
	for _, err := range c.Feed(old, 0).Events(ctx) {
		yielded++
		apiError(t, err, 410, client.CodeFeedExpired, client.ErrFeedExpired)
	}
	for _, err := range c.Feed("", 1001).Events(ctx) {
		yielded++
		apiError(t, err, 400, client.CodeInvalidField, nil)
	}
	if yielded != 2 {
		t.Fatalf("the refused walks yielded %d times, want once each", yielded)
	}
}
