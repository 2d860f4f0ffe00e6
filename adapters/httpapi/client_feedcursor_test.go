package httpapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/client"
)

// feedOf is a served API with a feed of eight events (five creates, a
// change, a delete, a create), its client, the client's transport and the
// memory store behind it, and the ids of the events in the feed's order.
func feedOf(t *testing.T) (*testServer, *client.Client, *checkedTransport, *memory.Store, []string) {
	t.Helper()
	ctx := context.Background()
	store := memory.New()
	s := startServer(t, withStore(store))
	c, tr := s.plantClient(t, s.token(t, nil))
	for id := range int64(5) {
		if _, err := c.Create(ctx, client.NewPlant{ID: id, Name: "Fern"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Change(ctx, 2, client.Patch{}.SetName("Moss")); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, client.NewPlant{ID: 3, Name: "Ivy"}); err != nil {
		t.Fatal(err)
	}
	return s, c, tr, store, eventIDs(t, c)
}

// walkIDs walks f to the feed's end and returns the ids of its events.
func walkIDs(t *testing.T, f *client.Feed) []string {
	t.Helper()
	var ids []string
	for e, err := range f.Events(context.Background()) {
		if err != nil {
			t.Fatalf("feed: %v", err)
		}
		ids = append(ids, e.ID)
	}
	return ids
}

// stopAfter walks a Feed of opts and breaks after n events.
func stopAfter(t *testing.T, c *client.Client, opts client.FeedOptions, n int) *client.Feed {
	t.Helper()
	f := c.Feed(opts)
	yielded := 0
	for _, err := range f.Events(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if yielded++; yielded == n {
			break
		}
	}
	if yielded != n {
		t.Fatalf("the feed yielded %d events, want at least %d", yielded, n)
	}
	return f
}

// A walk stopped after any event, inside a page or at its end, saves a
// cursor that is the API's own: GET /events takes it and answers exactly
// the events after the last one yielded, and a Feed made from it, with any
// page size, yields each of them once. The cursor at a page's end costs no
// request; inside a page, one.
func TestClientFeedCursorIsTheAPIs(t *testing.T) {
	s, c, tr, _, all := feedOf(t)
	for _, size := range []int{1, 3, 4, 100} {
		for n := 1; n <= len(all); n++ {
			t.Run(fmt.Sprintf("pages of %d, stopped after %d", size, n), func(t *testing.T) {
				f := stopAfter(t, c, client.FeedOptions{PageSize: size}, n)
				sent := len(tr.requests())
				cursor := cursorOf(t, f)
				if atEnd, asked := n%size == 0 || n == len(all), len(tr.requests())-sent; (atEnd && asked != 0) || (!atEnd && asked != 1) {
					t.Errorf("the cursor cost %d requests", asked)
				}
				events, _ := s.eventsPage(t, "/events?limit=1000&after="+cursor)
				var served []string
				for _, e := range events {
					served = append(served, e.ID)
				}
				if !slices.Equal(served, all[n:]) {
					t.Fatalf("GET /events?after=%s answers %v, want %v", cursor, served, all[n:])
				}
				for _, next := range []int{0, 2} {
					if got := walkIDs(t, c.Feed(client.FeedOptions{After: cursor, PageSize: next})); !slices.Equal(got, all[n:]) {
						t.Fatalf("from the cursor in pages of %d: %v, want %v", next, got, all[n:])
					}
				}
				// The Feed itself goes on from there as well.
				if got := walkIDs(t, f); !slices.Equal(got, all[n:]) {
					t.Fatalf("the walk going on: %v, want %v", got, all[n:])
				}
			})
		}
	}
}

// The oldest events may be pruned between a walk's stop and its cursor:
// from the feed's start, the cursor is still the place after the last event
// yielded, or the start again when that event was pruned too, every event
// kept following it; a walk stopped after a cursor whose events were pruned
// meets ErrFeedExpired, as any reader of that cursor does.
func TestClientFeedCursorWhenEventsArePruned(t *testing.T) {
	ctx := context.Background()
	for pruned, wantCursor := range map[int]string{2: "after the third", 3: "the start"} {
		t.Run(fmt.Sprintf("%d pruned", pruned), func(t *testing.T) {
			_, c, _, store, all := feedOf(t)
			f := stopAfter(t, c, client.FeedOptions{PageSize: 4}, 3)
			if n, err := store.PruneEvents(ctx, 0, pruned); err != nil || n != pruned {
				t.Fatalf("pruned %d: %v", n, err)
			}
			cursor := cursorOf(t, f)
			if (cursor == "") != (wantCursor == "the start") {
				t.Fatalf("cursor %q, want %s", cursor, wantCursor)
			}
			if got := walkIDs(t, c.Feed(client.FeedOptions{After: cursor})); !slices.Equal(got, all[3:]) {
				t.Fatalf("from the cursor: %v, want %v", got, all[3:])
			}
		})
	}

	_, c, _, store, _ := feedOf(t)
	first := cursorOf(t, stopAfter(t, c, client.FeedOptions{PageSize: 1}, 1))
	f := stopAfter(t, c, client.FeedOptions{After: first, PageSize: 4}, 2)
	if _, err := store.PruneEvents(ctx, 0, 2); err != nil {
		t.Fatal(err)
	}
	if cursor, err := f.Cursor(ctx); !errors.Is(err, client.ErrFeedExpired) {
		t.Fatalf("the cursor after pruned events: %q %v", cursor, err)
	}
}
