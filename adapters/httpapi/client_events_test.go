package httpapi

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/client"
)

// The client's Feed walks the event feed page by page to its end, keeps
// its cursor, and a later walk yields exactly the writes committed since;
// a cursor past the retention is ErrFeedExpired. (Where a walk that stops
// inside a page goes on from: client_feedcursor_test.go.)
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
	f := c.Feed(client.FeedOptions{PageSize: 2})
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
	if got := walk(c.Feed(client.FeedOptions{After: cursorOf(t, f)})); fmt.Sprint(got) != fmt.Sprint([]string{`plant.created 3 Ivy ""`}) {
		t.Fatalf("after the cursor: %q", got)
	}
	// A break moves the cursor past the events yielded, inside a page as
	// on its last event, whatever the page size of the walk that goes on.
	g := c.Feed(client.FeedOptions{PageSize: 2})
	for range g.Events(ctx) {
		break
	}
	if rest := walk(g); len(rest) != 7 {
		t.Fatalf("after a break on a page's first event: %q, want the 7 that follow", rest)
	}
	h := c.Feed(client.FeedOptions{PageSize: 2})
	n := 0
	for range h.Events(ctx) {
		if n++; n == 2 {
			break
		}
	}
	if rest := walk(h); len(rest) != 6 {
		t.Fatalf("after a break on a page's last event: %q, want the 6 that follow", rest)
	}
	for _, size := range []int{10, 1, 0} {
		// A reader that applies at most three events a run, saving its
		// cursor each time, gets through the feed, each event once.
		var seen []string
		saved := ""
		for run := 0; run < 10; run++ {
			f := c.Feed(client.FeedOptions{After: saved, PageSize: 10})
			if run > 0 {
				f = c.Feed(client.FeedOptions{After: saved, PageSize: size})
			}
			n := 0
			for e, err := range f.Events(ctx) {
				if err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				seen = append(seen, e.ID)
				if n++; n == 3 {
					break
				}
			}
			saved = cursorOf(t, f)
		}
		if len(seen) != 8 || fmt.Sprint(seen) != fmt.Sprint(eventIDs(t, c)) {
			t.Fatalf("three events a run, going on with pages of %d: %v, want each of the 8 once, in order", size, seen)
		}
	}
	// A cursor is the API's: what the client once made of a place inside a
	// page ("<cursor>.1.evt_4") is refused by the API, not read by Feed.
	yielded := 0
	for _, err := range c.Feed(client.FeedOptions{After: cursorOf(t, f) + ".1.evt_4"}).Events(ctx) {
		yielded++
		apiError(t, err, 400, client.CodeInvalidField, nil)
	}
	// The end of the context stops a walk inside a page, with the
	// context's error, and the cursor is after the last event yielded.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	k := c.Feed(client.FeedOptions{PageSize: 100})
	var before []string
	var stopped error
	for e, err := range k.Events(cctx) {
		if err != nil {
			stopped = err
			break
		}
		before = append(before, e.ID)
		if len(before) == 3 {
			cancel()
		}
	}
	if len(before) != 3 || !errors.Is(stopped, context.Canceled) {
		t.Fatalf("cancelled after 3 events: yielded %v, then %v", before, stopped)
	}
	if rest := walk(k); len(rest) != 5 {
		t.Fatalf("after the cancelled walk: %q, want the 5 that follow", rest)
	}

	old := formatCursor(application.FeedPosition{At: time.Now().Add(-169 * time.Hour)})
	for _, err := range c.Feed(client.FeedOptions{After: old}).Events(ctx) {
		yielded++
		apiError(t, err, 410, client.CodeFeedExpired, client.ErrFeedExpired)
	}
	for _, err := range c.Feed(client.FeedOptions{PageSize: 1001}).Events(ctx) {
		yielded++
		apiError(t, err, 400, client.CodeInvalidField, nil)
	}
	if yielded != 3 {
		t.Fatalf("the refused walks yielded %d times, want once each", yielded)
	}
}

// eventIDs are the ids of every event of the feed, in its order, read in
// one page.
func eventIDs(t *testing.T, c *client.Client) []string {
	t.Helper()
	var ids []string
	for e, err := range c.Feed(client.FeedOptions{PageSize: 1000}).Events(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	return ids
}

// cursorOf is f's cursor, which t fails without.
func cursorOf(t *testing.T, f *client.Feed) string {
	t.Helper()
	cursor, err := f.Cursor(context.Background())
	if err != nil {
		t.Fatalf("cursor: %v", err)
	}
	return cursor
}
