package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/plantstore/plantstore/application"
)

// storeEventRows writes plants so that plant_events holds rows of 1, 1, 1,
// 9, 3, 1 and 1 events: three creates alone, then one statement of seven
// creates and two deletes, one of three creates, and two creates alone.
func storeEventRows(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	storeFerns(t, s, 21, 22, 23)
	mixed := []write{deleteWrite(21), deleteWrite(22)}
	for id := range int64(7) {
		mixed = append(mixed, createWrite(record(t, 1+id, fmt.Sprintf("Fern %d", 1+id), "")))
	}
	for _, batch := range [][]write{mixed, creates(record(t, 8, "Moss", ""), record(t, 9, "Moss", ""), record(t, 10, "Moss", ""))} {
		if segs := segments(batch); len(segs) != 1 {
			t.Fatalf("segments %v; want the batch in one statement", segs)
		}
		for i, r := range s.flush(ctx, batch) {
			if r.Err != nil || !r.Value.done {
				t.Fatalf("write %d of the batch: %+v, %v", i, r.Value, r.Err)
			}
		}
	}
	storeFerns(t, s, 11, 12)
	var counts []int
	if err := s.db.Select(&counts, `SELECT count FROM plant_events ORDER BY xid, number`); err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 1, 1, 9, 3, 1, 1}; !slices.Equal(counts, want) {
		t.Fatalf("rows of plant_events hold %v events; want %v, a row per statement", counts, want)
	}
}

// feedPositions reads the feed from its start a page of one at a time,
// and returns each event and its position: the Next of its page.
func feedPositions(t *testing.T, s *Store, n int) ([]feedEvent, []application.FeedPosition) {
	t.Helper()
	var pos application.FeedPosition
	readUntilFrom(t, s, &pos, n) // past the horizon, which other work may hold
	q := application.FeedQuery{Limit: 1, Retention: application.DefaultEventRetention}
	events, positions := make([]feedEvent, n), make([]application.FeedPosition, n)
	for i := range n {
		page := mustPage(t, s, q)
		var one []feedEvent
		if err := json.Unmarshal(page.JSON, &one); err != nil || len(one) != 1 {
			t.Fatalf("page %d of one event: %s, %v", i, page.JSON, err)
		}
		events[i], positions[i] = one[0], page.Next
		q.After, q.HasAfter = page.Next, true
	}
	return events, positions
}

// A statement's events are one row, and a page may begin and end inside
// one: from any position, a page of any size holds the events that follow
// it, in order, up to its size, and a page that is not full holds every
// one of them.
func TestPagesBeginAndEndInsideAStatementsRow(t *testing.T) {
	s, _ := newStore(t)
	storeEventRows(t, s)
	const n = 17
	all, positions := feedPositions(t, s, n)
	for i, e := range all {
		if i > 0 && e.Number <= all[i-1].Number {
			t.Fatalf("event %d numbered %d after %d", i, e.Number, all[i-1].Number)
		}
	}
	// Pages read as many rows as their size needs at the size rows had
	// lately: at one event a row (every row a page may need, taken whole),
	// at 3, and at 1,000, which cuts most pages short and has them read
	// again.
	sizes, k := []int{1, 3, 1000}, 0
	for from := -1; from < n; from++ {
		for limit := 1; limit <= n+2; limit++ {
			q := application.FeedQuery{Limit: limit, Retention: application.DefaultEventRetention}
			if from >= 0 {
				q.After, q.HasAfter = positions[from], true
			}
			size := sizes[k%len(sizes)]
			k++
			s.feedRows.observe(1, size)
			page := mustPage(t, s, q)
			var got []feedEvent
			if err := json.Unmarshal(page.JSON, &got); err != nil {
				t.Fatalf("%s: %v", page.JSON, err)
			}
			want := all[from+1 : min(from+1+limit, n)]
			if !slices.EqualFunc(got, want, func(a, b feedEvent) bool { return a.Number == b.Number && a.Type == b.Type }) || page.Count != len(want) {
				t.Fatalf("page of %d after event %d, rows of %d lately: %d events %+v; want %+v", limit, from, size, page.Count, got, want)
			}
			samePlace := func(a, b application.FeedPosition) bool { return a.Tx == b.Tx && a.Number == b.Number }
			switch {
			case len(want) == limit && !samePlace(page.Next, positions[from+limit]):
				t.Fatalf("a full page of %d after event %d goes on from %+v; want its last event's %+v", limit, from, page.Next, positions[from+limit])
			case len(want) < limit && before(page.Next, positions[n-1]):
				t.Fatalf("the last page of %d after event %d goes on from %+v, before the last event", limit, from, page.Next)
			}
		}
	}
}

// The pruner removes whole rows and counts their events; a position inside
// a removed row is expired, and the position of its last event reads on.
func TestPruningRemovesAStatementsEventsTogether(t *testing.T) {
	s, _ := newStore(t)
	storeEventRows(t, s)
	all, positions := feedPositions(t, s, 17)
	if n, err := s.PruneEvents(context.Background(), 0, 4); err != nil || n != 12 {
		t.Fatalf("PruneEvents of four rows = %d, %v; want their 12 events", n, err)
	}
	q := application.FeedQuery{After: positions[5], HasAfter: true, Limit: 10, Retention: application.DefaultEventRetention}
	if _, err := s.ReadEvents(context.Background(), q); !errors.Is(err, application.ErrFeedExpired) {
		t.Fatalf("ReadEvents inside a pruned row = %v; want ErrFeedExpired", err)
	}
	q.After = positions[11]
	var got []feedEvent
	if err := json.Unmarshal(mustPage(t, s, q).JSON, &got); err != nil || len(got) != 5 || got[0].Number != all[12].Number {
		t.Fatalf("after the last pruned event: %+v, %v; want the 5 events left", got, err)
	}
}

// A page reads half again the rows that hold it at the size rows had
// lately, and two more, never more than the rows that always suffice.
func TestAPageReadsTheRowsItNeeds(t *testing.T) {
	var size rowSize
	for _, tt := range []struct {
		rows, events, limit, want int
	}{
		{0, 0, 100, 101}, // nothing read yet: every row a page may need
		{10, 10, 100, 101},
		{10, 160, 100, 12},
		{1, 1000, 100, 3},
		{1, 1000, 1, 2},
		{4, 10, 5, 5},
	} {
		size.observe(tt.rows, tt.events)
		if got := size.bound(tt.limit); got != tt.want {
			t.Errorf("after rows of %d events in %d rows, a page of %d reads %d rows; want %d", tt.events, tt.rows, tt.limit, got, tt.want)
		}
		if single := tt.events < 2*tt.rows || tt.rows == 0; size.single() != single {
			t.Errorf("after rows of %d events in %d rows, rows of one event: %v; want %v", tt.events, tt.rows, size.single(), single)
		}
	}
}

// A statement whose events include one of a type that is not an event's
// stores none of them: the row's lines would miss one.
func TestARowWithAnEventOfNoEventsTypeIsRefused(t *testing.T) {
	s, _ := newStore(t)
	stmt := `WITH k AS (
    SELECT nextval('plant_events_number_seq') AS number, t.type, 1::bigint AS plant_id, '{"id":1}' AS item
    FROM unnest($1::text[]) AS t (type)
), ` + fmt.Sprintf(eventsRow, "SELECT "+eventColumns+" FROM k") + ` SELECT 1`
	if _, err := s.db.Exec(stmt, textArray([]string{"plant.created", "plant.renamed"}, nil)); err == nil {
		t.Fatal("a row with an event of type plant.renamed was stored")
	}
	if _, err := s.db.Exec(stmt, textArray([]string{"plant.created", "plant.deleted"}, nil)); err != nil {
		t.Fatalf("a row of two events: %v", err)
	}
	var counts []int
	if err := s.db.Select(&counts, `SELECT count FROM plant_events`); err != nil || !slices.Equal(counts, []int{2}) {
		t.Fatalf("rows of %v events, %v; want the one row of two", counts, err)
	}
}
