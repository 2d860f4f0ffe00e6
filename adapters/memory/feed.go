package memory

import (
	"context"
	"sort"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// feed keeps the event of every write, in the order the writes took the
// store's lock, which guards it: a number is handed out and its event
// stored in one step, so numbers are the feed's order and none is ever
// passed by one committed later.
type feed struct {
	events []feedEvent // in number order
	last   int64       // the last number handed out
	floor  int64       // the number of the last event pruned: positions before it are expired
}

type feedEvent struct {
	number int64
	typ    application.EventType
	item   string
	at     time.Time
}

// add stores the event of one write of p, and returns it.
func (f *feed) add(typ application.EventType, p domain.Plant) feedEvent {
	f.last++
	e := feedEvent{number: f.last, typ: typ, item: string(plantjson.AppendItem(nil, p)), at: time.Now().Truncate(time.Microsecond)}
	f.events = append(f.events, e)
	return e
}

// ReadEvents returns the page of at most q.Limit events that follow
// q.After, rendered as the API writes it.
func (s *Store) ReadEvents(ctx context.Context, q application.FeedQuery) (application.EventPage, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.begin(ctx); err != nil {
		return application.EventPage{}, err
	}
	now := time.Now()
	f := &s.feed
	if q.HasAfter && (q.After.At.Before(now.Add(-time.Duration(q.Retention))) || q.After.Number < f.floor) {
		return application.EventPage{}, application.ErrFeedExpired
	}
	from := sort.Search(len(f.events), func(i int) bool { return f.events[i].number > q.After.Number })
	events := f.events[from:min(len(f.events), from+q.Limit)]
	next := application.FeedPosition{Number: max(q.After.Number, f.last), At: now.Truncate(time.Microsecond)}
	if len(events) == q.Limit {
		next.Number = events[len(events)-1].number
	}
	if len(events) == 0 {
		return application.EmptyEventPage(next), nil
	}
	page := application.EventPage{JSON: []byte{'['}, Count: len(events), Next: next}
	var w plantjson.EventWriter
	for i, e := range events {
		if i > 0 {
			page.JSON = append(page.JSON, ',')
		}
		var err error
		if page.JSON, err = w.Append(page.JSON, string(e.typ), e.number, e.at, e.item); err != nil {
			return application.EventPage{}, err
		}
	}
	page.JSON = append(page.JSON, ']')
	return page, nil
}

// PruneEvents removes at most limit of the oldest events committed longer
// than retention ago.
func (s *Store) PruneEvents(ctx context.Context, retention application.EventRetention, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	cutoff := time.Now().Add(-time.Duration(retention))
	f := &s.feed
	n := 0
	for n < min(limit, len(f.events)) && f.events[n].at.Before(cutoff) {
		n++
	}
	if n > 0 {
		f.floor = f.events[n-1].number
		f.events = append(f.events[:0:0], f.events[n:]...)
	}
	return n, nil
}
