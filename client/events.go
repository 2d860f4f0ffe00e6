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
	"strconv"
	"strings"
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
	// state it had. Its ETag is empty.
	Plant Plant `json:"plant"`
}

// Feed reads the event feed (GET /events) from a position, and remembers
// how far it got, so that a mirror of the plants can read every write
// exactly once, in each plant's order, across restarts:
//
//	f := c.Feed(savedCursor, 0)
//	for e, err := range f.Events(ctx) {
//		if err != nil {
//			return err
//		}
//		apply(e)
//	}
//	save(f.Cursor()) // where the next walk starts
//
// A Feed is not safe for concurrent use.
type Feed struct {
	c        *Client
	cursor   string // the service's: where the next page starts
	pageSize int
	// The events of the page at cursor already yielded, when a walk
	// stopped inside a page: how many, and the id of the last of them.
	skip   int
	skipID string
	err    error // a cursor Feed could not read
}

// Feed is the event feed from cursor (a Cursor saved before, opaque; ""
// for the oldest event kept), pageSize events a request (1 to 1000; 0 lets
// the service choose, 100).
func (c *Client) Feed(cursor string, pageSize int) *Feed {
	f := &Feed{c: c, cursor: cursor, pageSize: pageSize}
	// The service hands out a cursor per page. A Cursor inside a page is
	// the page's cursor ("" for the feed's first), then how many of its
	// events were yielded and the last one's id, each after a '.', which no
	// cursor of the service holds.
	if page, within, ok := strings.Cut(cursor, "."); ok {
		n, id, _ := strings.Cut(within, ".")
		skip, err := strconv.Atoi(n)
		if err != nil || skip < 1 || skip > maxPageSize || !strings.HasPrefix(id, "evt_") {
			f.err = fmt.Errorf("plantstore: %q is not a cursor of the feed", cursor)
		}
		f.cursor, f.skip, f.skipID = page, skip, id
	}
	if pageSize < math.MinInt32 || pageSize > math.MaxInt32 {
		// Any other size is the service's to judge, as ListPage's is.
		f.err = fmt.Errorf("plantstore: page size %d: want 1 to 1000", pageSize)
	}
	return f
}

// Cursor is where the feed goes on from: after the last event a walk
// yielded, or after every event the service had to give when the walk
// reached the end. Save it to go on later; a cursor older than the
// service's retention (a week by default) is refused with ErrFeedExpired.
// It is for Feed: after a walk stopped inside a page it is not one of the
// service's cursors, which name the start of a page.
func (f *Feed) Cursor() string {
	if f.skip == 0 {
		return f.cursor
	}
	return f.cursor + "." + strconv.Itoa(f.skip) + "." + f.skipID
}

// Events yields the events that follow the feed's cursor, a page per
// request, until it reaches the end (a page with fewer events than asked),
// the caller's break, the end of ctx, or an error: then it yields a zero
// Event with the error (one that errors.Is matches with ctx's, when it
// ended) and stops. The cursor moves
// past each event yielded. The feed has no end: walking it again later
// yields the events committed since, none twice, none skipped.
func (f *Feed) Events(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if f.err != nil {
			yield(Event{}, f.err)
			return
		}
		for {
			asked := max(cmp.Or(f.pageSize, defaultPageSize), f.skip)
			size := f.pageSize
			if f.skip > 0 {
				size = asked // the page must hold the events already yielded
			}
			page, next, err := f.c.eventPage(ctx, f.cursor, size)
			if err != nil {
				yield(Event{}, err)
				return
			}
			from := 0
			if f.skip > 0 {
				// Events below the page's end never move: the page holds
				// the ones already yielded first. Should the last of them
				// not be where it was, every event of the page is yielded
				// again, which Number tells apart, rather than one lost.
				if f.skip <= len(page) && page[f.skip-1].ID == f.skipID {
					from = f.skip
				}
				f.skip, f.skipID = 0, ""
			}
			for i := from; i < len(page); i++ {
				if err := ctx.Err(); err != nil {
					f.stopWithin(page, i)
					yield(Event{}, err)
					return
				}
				if !yield(page[i], nil) {
					f.stopWithin(page, i+1)
					if i == len(page)-1 {
						f.cursor = next
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
	if n > 0 && n < len(page) {
		f.skip, f.skipID = n, page[n-1].ID
	}
}

// defaultPageSize is how many events the service puts on a page when the
// request does not say; maxPageSize the most it puts on one.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// eventPage reads one page of the feed after cursor and the cursor of the
// page that follows, from the answer's Link rel="next".
func (c *Client) eventPage(ctx context.Context, cursor string, pageSize int) ([]Event, string, error) {
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
	var events []Event
	if err := json.Unmarshal(b, &events); err != nil {
		return nil, "", fmt.Errorf("plantstore: the answer is not a list of events: %w", err)
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
