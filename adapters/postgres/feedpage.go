package postgres

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
)

// feedPage is the page of the reader q in r, which read at most bound
// rows: its events, and the position to read on from. The page is
// complete unless bound cut it short: when it is not full and read bound
// rows, more rows may hold events it should have taken.
func feedPage(r feedRow, q application.FeedQuery, bound int) (page application.EventPage, complete bool, err error) {
	floor, err := position(r.FloorXID, r.FloorNumber)
	if err != nil {
		return application.EventPage{}, false, err
	}
	if q.HasAfter && (q.After.At.Before(r.Now.Add(-time.Duration(q.Retention))) || before(q.After, floor)) {
		return application.EventPage{}, true, application.ErrFeedExpired
	}
	after := q.After
	if !q.HasAfter {
		// From the start: the first events kept follow the floor.
		after = floor
	}
	page, last, err := pageOfEvents(r, after, q.Limit)
	if err != nil {
		return application.EventPage{}, false, err
	}
	page.Next = last
	if page.Count < q.Limit {
		if r.Rows >= bound {
			return application.EventPage{}, false, nil
		}
		// Every event below the horizon that follows q.After is on the
		// page, every transaction of the last one's included: the page
		// goes on from past that transaction. Not from the horizon, though
		// every transaction below it has ended: a promoted standby never
		// learnt the transaction ids the old primary handed out without
		// writing them to the standby (rollbacks, transactions of other
		// databases), and hands them out again, below an old primary's
		// horizon. The last event's own transaction the standby has: it
		// confirmed its commit before the page could read it (confirm.go).
		if page.Count > 0 {
			page.Next = application.FeedPosition{Tx: last.Tx + 1}
		}
	}
	page.Next.At = r.Now.Truncate(time.Microsecond)
	return page, true, nil
}

// pageOfEvents renders the first limit events of r that follow after,
// and returns the position of the last one (after, on an empty page). It
// holds r's lines to their count and to the feed's order.
func pageOfEvents(r feedRow, after application.FeedPosition, limit int) (application.EventPage, application.FeedPosition, error) {
	if r.Count == 0 {
		return application.EmptyEventPage(after), after, nil
	}
	var (
		lines = r.Lines.String
		// An event is its line's item and about 60 bytes more.
		page   = application.EventPage{JSON: make([]byte, 0, len(lines)+min(r.Count, limit)*64+2)}
		last   = after
		prev   application.FeedPosition
		events plantjson.EventWriter
	)
	page.JSON = append(page.JSON, '[')
	for k := 0; k < r.Count && page.Count < limit; k++ {
		line, rest, _ := strings.Cut(lines, "\n")
		lines = rest
		ev, err := parseFeedLine(line)
		if err != nil {
			return application.EventPage{}, last, fmt.Errorf("feed page, event %d of %d: %w", k+1, r.Count, err)
		}
		if k > 0 && !before(prev, ev.at) {
			return application.EventPage{}, last, fmt.Errorf("feed page out of order: (%d, %d) after (%d, %d)", ev.at.Tx, ev.at.Number, prev.Tx, prev.Number)
		}
		prev = ev.at
		if !before(after, ev.at) {
			continue // the first row's events the reader has read
		}
		last = ev.at
		if page.Count > 0 {
			page.JSON = append(page.JSON, ',')
		}
		if page.JSON, err = events.Append(page.JSON, ev.typ, ev.at.Number, time.UnixMicro(ev.micros), ev.item); err != nil {
			return application.EventPage{}, last, err
		}
		page.Count++
	}
	if page.Count < limit && lines != "" {
		return application.EventPage{}, last, fmt.Errorf("feed page of %d events has more lines", r.Count)
	}
	page.JSON = append(page.JSON, ']')
	return page, last, nil
}

// feedLine is one event as plant_events.line keeps it.
type feedLine struct {
	at        application.FeedPosition
	typ, item string
	micros    int64
}

// parseFeedLine reads a line "xid number type micros item", whose xid and
// number are decimal digits only; micros may have a sign (a time before
// 1970, which only a row written by hand can have).
func parseFeedLine(line string) (feedLine, error) {
	xid, rest, ok1 := cutDigits(line)
	number, rest, ok2 := cutDigits(rest)
	typ, rest, ok3 := strings.Cut(rest, " ")
	sign := int64(1)
	if strings.HasPrefix(rest, "-") {
		sign, rest = -1, rest[1:]
	}
	micros, item, ok4 := cutDigits(rest)
	if !ok1 || !ok2 || !ok3 || !ok4 || number > math.MaxInt64 || micros > math.MaxInt64 {
		return feedLine{}, fmt.Errorf("feed line %.80q is not xid, number, type, time and item", line)
	}
	return feedLine{at: application.FeedPosition{Tx: xid, Number: int64(number)}, typ: typ, item: item, micros: sign * int64(micros)}, nil
}

// cutDigits reads the decimal number that s begins with, up to the space
// that ends it, and returns it and what follows the space: a page's lines
// are read a number at a time without strconv's generality.
func cutDigits(s string) (n uint64, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' && i > 0:
			return n, s[i+1:], true
		case c < '0' || c > '9', n > (math.MaxUint64-uint64(c-'0'))/10:
			return 0, "", false
		}
		n = n*10 + uint64(c-'0')
	}
	return 0, "", false
}

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
