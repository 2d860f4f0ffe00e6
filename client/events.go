package client

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/plantstore/plantstore/client/internal/oapi"
)

// The types of Event.
const (
	PlantCreated = "plant.created"
	PlantChanged = "plant.changed"
	PlantDeleted = "plant.deleted"
)

// Event is one committed write of a plant, as the event feed lists it.
type Event struct {
	// ID is unique and stable ("evt_1042").
	ID string `json:"id"`
	// Type is PlantCreated, PlantChanged or PlantDeleted.
	Type string `json:"type"`
	// Number grows with every write of the plant, across deletes and
	// re-creates: an event whose Number is below one already applied for
	// the same plant is older, and can be dropped.
	Number int64 `json:"number"`
	// Time is when the write was committed.
	Time time.Time `json:"time"`
	// Plant is the plant as stored after the write; for PlantDeleted, the
	// state it had. Its ETag is that state's: the plant's current ETag
	// while no later write of it followed, for a conditional write.
	Plant Plant `json:"plant"`
}

// FeedOptions says where Feed starts and how many events it asks for at a
// time.
type FeedOptions struct {
	// After is a cursor of the feed, opaque: one that Feed.Cursor gave, or
	// the after of a Link rel="next" the API sent, which are the same kind.
	// "" starts at the oldest event the service keeps.
	After string
	// PageSize is the most events one request answers, 1 to 1000; 0 lets
	// the service choose (100).
	PageSize int
}

// Feed reads the event feed (GET /events) from a position, and remembers
// how far it got, so that a mirror of the plants can read every write
// exactly once, in each plant's order, across restarts:
//
//	f := c.Feed(client.FeedOptions{After: saved})
//	for e, err := range f.Events(ctx) {
//		if err != nil {
//			return err
//		}
//		apply(e)
//	}
//	saved, err = f.Cursor(ctx) // where the next walk starts
//
// A Feed is not safe for concurrent use.
type Feed struct {
	c        *Client
	cursor   string // the API's: where the page being walked, or the next, starts
	pageSize int
	// The events of the page at cursor already yielded, when a walk
	// stopped inside a page: how many, and the id of the last of them.
	skip   int
	skipID string
	err    error // options Feed cannot use
}

// Feed is the event feed from opts.After, read opts.PageSize events a
// request.
func (c *Client) Feed(opts FeedOptions) *Feed {
	f := &Feed{c: c, cursor: opts.After, pageSize: opts.PageSize}
	if opts.PageSize < math.MinInt32 || opts.PageSize > math.MaxInt32 {
		// Any other size is the service's to judge, as ListPage's is.
		f.err = fmt.Errorf("plantstore: PageSize %d: want 1 to 1000", opts.PageSize)
	}
	return f
}

// Cursor is the API's cursor of the place after the last event the walks
// yielded, or after every event the service had to give when a walk
// reached the end: the after of a Link the API sent, which the API, Feed
// and any other reader of the feed accept. Save it to go on later; a
// cursor older than the service's retention (a week by default) is refused
// with ErrFeedExpired.
//
// The service hands out a cursor at the end of each page only. When the
// last walk stopped inside a page (a break, the end of its context),
// Cursor asks the service for the cursor after the last event yielded: it
// reads the events of that page already yielded again, as a page of their
// own, and takes its link; an error then is the request's, and Cursor can
// be asked again. Otherwise it sends nothing.
func (f *Feed) Cursor(ctx context.Context) (string, error) {
	if err := f.settle(ctx); err != nil {
		return "", err
	}
	return f.cursor, nil
}

// Events yields the events that follow the feed's cursor, a page per
// request, until it reaches the end (a page with fewer events than asked),
// the caller's break, the end of ctx, or an error: then it yields a zero
// Event with the error (one that errors.Is matches with ctx's, when it
// ended) and stops. The cursor moves past each event yielded. The feed
// has no end: walking it again later yields the events committed since,
// none twice, none skipped.
func (f *Feed) Events(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if f.err != nil {
			yield(Event{}, f.err)
			return
		}
		// Go on after the events a walk that stopped inside a page
		// yielded: from the API's cursor after the last of them.
		if err := f.settle(ctx); err != nil {
			yield(Event{}, err)
			return
		}
		asked := cmp.Or(f.pageSize, defaultPageSize)
		for {
			page, next, err := f.c.eventPage(ctx, f.cursor, f.pageSize)
			if err != nil {
				yield(Event{}, err)
				return
			}
			for i := range page {
				if err := ctx.Err(); err != nil {
					f.stopWithin(page, i)
					yield(Event{}, err)
					return
				}
				if !yield(page[i], nil) {
					if i == len(page)-1 {
						f.cursor = next
					} else {
						f.stopWithin(page, i+1)
					}
					return
				}
			}
			f.cursor = next
			if len(page) < asked {
				return // the end: the page held every event there was
			}
		}
	}
}

// stopWithin keeps the feed's place after the first n events of page, read
// from its cursor.
func (f *Feed) stopWithin(page []Event, n int) {
	if n > 0 {
		f.skip, f.skipID = n, page[n-1].ID
	}
}

// settle turns a place inside a page (the page's cursor, and the events of
// it already yielded) into the API's cursor after the last event yielded.
// The events of a page before its end never move (an event committed later
// is never placed behind a cursor handed out), so the first skip events
// from the page's cursor are those yielded, and a page of exactly them
// ends where the walk stopped: that page's link is the place after them.
// Only the oldest events can go meanwhile, pruned past the retention: from
// the feed's start ("") the page then starts later, and holds the last
// event yielded nearer its start, or not at all when it was pruned too and
// every event kept follows it; after a cursor the service answers
// ErrFeedExpired.
func (f *Feed) settle(ctx context.Context) error {
	for f.skip > 0 {
		page, next, err := f.c.eventPage(ctx, f.cursor, f.skip)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(page, func(e Event) bool { return e.ID == f.skipID })
		switch {
		case i == f.skip-1: // a full page whose last event is the last yielded
			f.cursor, f.skip, f.skipID = next, 0, ""
		case i >= 0: // events before it were pruned: a shorter page ends at it
			f.skip = i + 1
		case f.cursor == "": // it was pruned too: every event kept follows it
			f.skip, f.skipID = 0, ""
		default:
			return fmt.Errorf("plantstore: the feed no longer holds %s, the last event yielded: %w", f.skipID, ErrFeedExpired)
		}
	}
	return nil
}

// defaultPageSize is how many events the service puts on a page when the
// request does not say.
const defaultPageSize = 100

// eventPage reads one page of the feed after cursor and the cursor of the
// page that follows, from the answer's Link rel="next".
func (c *Client) eventPage(ctx context.Context, cursor string, pageSize int) ([]Event, string, error) {
	if err := c.ready(); err != nil {
		return nil, "", err
	}
	params := &oapi.ListEventsParams{}
	if cursor != "" {
		after := oapi.Cursor(cursor)
		params.After = &after
	}
	if pageSize != 0 {
		limit := int32(pageSize) // within int32: Feed checked it
		params.Limit = &limit
	}
	resp, err := c.api.ListEvents(ctx, params)
	b, err := read(resp, err, http.StatusOK)
	if err != nil {
		return nil, "", err
	}
	// Each event's plant is kept as served, for its ETag; the outer Plant
	// hides the Event's in decoding.
	var wire []struct {
		Event
		Plant json.RawMessage `json:"plant"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return nil, "", fmt.Errorf("plantstore: the answer is not a list of events: %w", err)
	}
	events := make([]Event, len(wire))
	for i, w := range wire {
		events[i] = w.Event
		if events[i].Plant, err = listed(w.Plant); err != nil {
			return nil, "", fmt.Errorf("plantstore: the answer is not a list of events: %w", err)
		}
	}
	link, ok, err := nextLink(resp.Header)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", fmt.Errorf("plantstore: the feed's page has no Link rel=\"next\"")
	}
	next, err := nextCursor(link)
	if err != nil {
		return nil, "", err
	}
	return events, next, nil
}

// nextCursor is the after parameter of the feed's next link, taken from the
// link rather than the link followed, so that the client keeps its own base
// URL, as nextOptions does for lists.
func nextCursor(link string) (string, error) {
	u, err := url.Parse(link)
	if err != nil {
		return "", fmt.Errorf("plantstore: the feed's next link %q is not a URL", link)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil || len(q["after"]) != 1 || q.Get("after") == "" {
		return "", fmt.Errorf("plantstore: the feed's next link %q has no cursor", link)
	}
	for k := range q {
		if k != "after" && k != "limit" {
			return "", fmt.Errorf("plantstore: the feed's next link %q has a parameter the client does not know: %s", link, strconv.Quote(k))
		}
	}
	return q.Get("after"), nil
}
