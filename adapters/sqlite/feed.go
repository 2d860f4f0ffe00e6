package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
)

// feedEventRow is a row of the plant_events table, as plantRow is for
// plants: the event of one write, committed with it.
type feedEventRow struct {
	// Number is AUTOINCREMENT's, handed out inside the single writer's
	// transaction: the order of the commits, never reused.
	Number  int64  `db:"number"`
	Type    string `db:"type"`
	PlantID int64  `db:"plant_id"`
	// Item is the plant as the service rendered it after the write; for a
	// delete, the state it had.
	Item      string `db:"item"`
	CreatedAt string `db:"created_at"`
}

// feedEventColumns are the columns of feedEventRow.
var feedEventColumns = columnsOf[feedEventRow]()

// recordEvent stores the event of one write; its number is the table's.
var recordEvent = `INSERT INTO plant_events (type, plant_id, item, created_at) VALUES (:type, :plant_id, :item, :created_at)`

// record stores the event of w, a write of its plant, whose item is item
// after it, in the batch's transaction; with the event payload it
// announces the event to every receiver, in the same transaction.
func (b *batchTx) record(typ application.EventType, w write, item string) error {
	row := feedEventRow{Type: string(typ), PlantID: int64(w.id), Item: item, CreatedAt: b.at}
	res, err := b.stmt(recordEvent).ExecContext(b.ctx, row)
	if err != nil {
		return edgeError(fmt.Sprintf("record the event of plant %d", w.id), err)
	}
	if !b.store.envelopes || len(b.store.receivers) == 0 {
		return nil
	}
	// The number is the row's, AUTOINCREMENT's rowid.
	if row.Number, err = res.LastInsertId(); err != nil {
		return edgeError(fmt.Sprintf("record the event of plant %d", w.id), err)
	}
	for _, env := range envelopeRowsOf(row, w.traceParent(), b.store.receivers) {
		if _, err := b.stmt(announceEnvelope).ExecContext(b.ctx, env); err != nil {
			return edgeError("announce event", err)
		}
	}
	b.announced = true
	return nil
}

// readFeed is one page of events after ?1, at most ?2, with the floor and
// the last number handed out, in one statement and so one snapshot: a prune
// committed between reading the floor and the events would otherwise hide
// events behind a position that looks fresh. The page is one row, its
// events as parallel lists in number order (numbers, types and times comma-
// separated, items one a line: an item is JSON, in which a line break is
// always escaped), as a page of plants is one text; pageOfEvents checks the
// order. Nothing here renders JSON.
var readFeed = `
SELECT f.number AS floor,
       coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'plant_events'), 0) AS last,
       p.count, p.numbers, p.types, p.times, p.items
FROM plant_event_floor AS f, (
    SELECT count(*) AS count, group_concat(e.number, ',') AS numbers, group_concat(e.type, ',') AS types,
           group_concat(e.created_at, ',') AS times, group_concat(e.item, char(10)) AS items
    FROM (SELECT number, type, item, created_at FROM plant_events WHERE number > ?1 ORDER BY number LIMIT ?2) AS e
) AS p`

// feedRow is the one row readFeed answers.
type feedRow struct {
	Floor   int64          `db:"floor"`
	Last    int64          `db:"last"`
	Count   int            `db:"count"`
	Numbers sql.NullString `db:"numbers"`
	Types   sql.NullString `db:"types"`
	Times   sql.NullString `db:"times"`
	Items   sql.NullString `db:"items"`
}

// ReadEvents returns the page of at most q.Limit events that follow
// q.After, rendered as the API writes it. It reads through the read pool.
func (s *Store) ReadEvents(ctx context.Context, q application.FeedQuery) (application.EventPage, error) {
	now := time.Now()
	if q.HasAfter && q.After.At.Before(now.Add(-time.Duration(q.Retention))) {
		return application.EventPage{}, application.ErrFeedExpired
	}
	var r feedRow
	if err := s.get(ctx, &r, readFeed, q.After.Number, q.Limit); err != nil {
		return application.EventPage{}, edgeError("read events", err)
	}
	if q.HasAfter && q.After.Number < r.Floor {
		return application.EventPage{}, application.ErrFeedExpired
	}
	page, err := pageOfEvents(r, q.After.Number)
	if err != nil {
		return application.EventPage{}, err
	}
	if page.Count < q.Limit {
		// Every event that follows q.After is on the page: the next one
		// will be numbered after the last handed out.
		page.Next.Number = max(page.Next.Number, r.Last)
	}
	page.Next.At = now.Truncate(time.Microsecond)
	return page, nil
}

// pageOfEvents renders the events of r, which follow the number after, and
// sets the page's next number to the last one's.
func pageOfEvents(r feedRow, after int64) (application.EventPage, error) {
	page := application.EventPage{Next: application.FeedPosition{Number: after}}
	if r.Count == 0 {
		page.JSON = []byte("[]")
		return page, nil
	}
	numbers, types, times := strings.Split(r.Numbers.String, ","), strings.Split(r.Types.String, ","), strings.Split(r.Times.String, ",")
	items := strings.Split(r.Items.String, "\n")
	if len(numbers) != r.Count || len(types) != r.Count || len(times) != r.Count || len(items) != r.Count {
		return application.EventPage{}, fmt.Errorf("sqlite: feed page of %d events has lists of other lengths", r.Count)
	}
	page.JSON = make([]byte, 0, len(r.Items.String)+r.Count*96+2)
	page.JSON = append(page.JSON, '[')
	var events plantjson.EventWriter
	for k := range r.Count {
		number, err := strconv.ParseInt(numbers[k], 10, 64)
		if err != nil || number <= page.Next.Number {
			return application.EventPage{}, fmt.Errorf("sqlite: feed page out of order: %q after %d (%v)", numbers[k], page.Next.Number, err)
		}
		at, err := time.Parse(createdAtLayout, times[k])
		if err != nil {
			return application.EventPage{}, fmt.Errorf("sqlite: event %d: %w", number, err)
		}
		if k > 0 {
			page.JSON = append(page.JSON, ',')
		}
		if page.JSON, err = events.Append(page.JSON, types[k], number, at, items[k]); err != nil {
			return application.EventPage{}, err
		}
		page.Next.Number = number
	}
	page.JSON = append(page.JSON, ']')
	page.Count = r.Count
	return page, nil
}

// pruneEvents removes the oldest events, at most ?2, of those committed
// before ?1, and raises the floor to the last one it removed. It looks at
// the first ?2 events only, so that a pass does bounded work.
var pruneEvents = `
DELETE FROM plant_events
WHERE number IN (SELECT number FROM plant_events ORDER BY number LIMIT ?2) AND created_at < ?1
RETURNING number`

// PruneEvents removes at most limit of the oldest events committed longer
// than retention ago, on the writer, in one transaction with the floor.
// Like the outbox's bookkeeping it commits without waiting for the disk
// (relaxed): a prune lost to a power cut is done again by the next.
func (s *Store) PruneEvents(ctx context.Context, retention application.EventRetention, limit int) (int, error) {
	if s.closing.Load() {
		return 0, errClosed
	}
	var removed []int64
	err := s.relaxed(ctx, func(conn *sqlx.Conn) error {
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		if err := tx.SelectContext(ctx, &removed, pruneEvents, stamp(time.Now().Add(-time.Duration(retention))), limit); err != nil {
			return err
		}
		if len(removed) > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE plant_event_floor SET number = max(number, ?)`, slices.Max(removed)); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	if err != nil {
		return 0, edgeError("prune events", err)
	}
	return len(removed), nil
}
