package postgres

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
)

// feedPage is the page of the reader q in r: its events, and the position
// to read on from.
func feedPage(r feedRow, q application.FeedQuery) (application.EventPage, error) {
	horizon, err := strconv.ParseUint(r.Horizon, 10, 64)
	if err != nil {
		return application.EventPage{}, fmt.Errorf("feed horizon %q: %w", r.Horizon, err)
	}
	floor, err := position(r.FloorXID, r.FloorNumber)
	if err != nil {
		return application.EventPage{}, err
	}
	if q.HasAfter && (q.After.At.Before(r.Now.Add(-time.Duration(q.Retention))) || before(q.After, floor)) {
		return application.EventPage{}, application.ErrFeedExpired
	}
	page, last, err := pageOfEvents(r, q.After)
	if err != nil {
		return application.EventPage{}, err
	}
	page.Next = last
	if page.Count < q.Limit {
		// Every event below the horizon that follows q.After is on the page.
		if past := (application.FeedPosition{Tx: horizon}); before(last, past) {
			page.Next = past
		}
	}
	page.Next.At = r.Now.Truncate(time.Second)
	return page, nil
}

// pageOfEvents renders the events of r, and returns the position of the
// last one (after, on an empty page). It holds the lists to their count and
// to the feed's order.
func pageOfEvents(r feedRow, after application.FeedPosition) (application.EventPage, application.FeedPosition, error) {
	if r.Count == 0 {
		return application.EmptyEventPage(after), after, nil
	}
	var (
		xids, numbers, types, times = fields{r.XIDs.String, ','}, fields{r.Numbers.String, ','}, fields{r.Types.String, ','}, fields{r.Times.String, ','}
		items                       = fields{r.Items.String, '\n'}
		page                        = application.EventPage{JSON: make([]byte, 0, len(r.Items.String)+r.Count*96+2)}
		last                        = after
	)
	page.JSON = append(page.JSON, '[')
	for k := range r.Count {
		tx, err1 := strconv.ParseUint(xids.next(), 10, 64)
		number, err2 := strconv.ParseInt(numbers.next(), 10, 64)
		micros, err3 := strconv.ParseInt(times.next(), 10, 64)
		typ, item := types.next(), items.next()
		if err := errors.Join(err1, err2, err3); err != nil {
			return application.EventPage{}, last, fmt.Errorf("feed page, event %d of %d: %w", k+1, r.Count, err)
		}
		at := application.FeedPosition{Tx: tx, Number: number}
		if !before(last, at) {
			return application.EventPage{}, last, fmt.Errorf("feed page out of order: (%d, %d) after (%d, %d)", tx, number, last.Tx, last.Number)
		}
		last = at
		if k > 0 {
			page.JSON = append(page.JSON, ',')
		}
		if page.JSON, err1 = plantjson.AppendEvent(page.JSON, typ, number, time.UnixMicro(micros), item); err1 != nil {
			return application.EventPage{}, last, err1
		}
	}
	if !xids.done() || !numbers.done() || !types.done() || !times.done() || !items.done() {
		return application.EventPage{}, last, fmt.Errorf("feed page of %d events has lists of other lengths", r.Count)
	}
	page.JSON = append(page.JSON, ']')
	page.Count = r.Count
	return page, last, nil
}

// fields reads a list of fields separated by sep, one at a time.
type fields struct {
	rest string
	sep  byte
}

// next returns the next field; past the last, "".
func (f *fields) next() string {
	i := strings.IndexByte(f.rest, f.sep)
	if i < 0 {
		field := f.rest
		f.rest = ""
		return field
	}
	field := f.rest[:i]
	f.rest = f.rest[i+1:]
	return field
}

// done reports whether every field was read.
func (f *fields) done() bool { return f.rest == "" }

// position is the feed position of an event.
func position(xid string, number int64) (application.FeedPosition, error) {
	tx, err := strconv.ParseUint(xid, 10, 64)
	if err != nil {
		return application.FeedPosition{}, fmt.Errorf("feed position %q: %w", xid, err)
	}
	return application.FeedPosition{Tx: tx, Number: number}, nil
}

// before reports whether a comes before b in the feed's order.
func before(a, b application.FeedPosition) bool {
	return a.Tx < b.Tx || a.Tx == b.Tx && a.Number < b.Number
}
