package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
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
// events behind a position that looks fresh. A page without events is one
// row of NULLs.
var readFeed = `
SELECT f.number AS floor,
       coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'plant_events'), 0) AS last,
       e.number, e.type, e.item, e.created_at
FROM plant_event_floor AS f
LEFT JOIN (
    SELECT number, type, item, created_at FROM plant_events WHERE number > ?1 ORDER BY number LIMIT ?2
) AS e ON true
ORDER BY e.number`

// feedRow is a row readFeed answers: the floor, and an event or NULLs.
type feedRow struct {
	Floor     int64          `db:"floor"`
	Last      int64          `db:"last"`
	Number    sql.NullInt64  `db:"number"`
	Type      sql.NullString `db:"type"`
	Item      sql.NullString `db:"item"`
	CreatedAt sql.NullString `db:"created_at"`
}

// ReadEvents returns the page of at most q.Limit events that follow
// q.After, rendered as the API writes it. It reads through the read pool.
func (s *Store) ReadEvents(ctx context.Context, q application.FeedQuery) (application.EventPage, error) {
	now := time.Now()
	if q.HasAfter && q.After.At.Before(now.Add(-time.Duration(q.Retention))) {
		return application.EventPage{}, application.ErrFeedExpired
	}
	stmt, err := s.reads.stmt(ctx, s.read, readFeed)
	if err != nil {
		return application.EventPage{}, edgeError("read events", err)
	}
	rows, err := stmt.QueryxContext(ctx, q.After.Number, q.Limit)
	if err != nil {
		return application.EventPage{}, edgeError("read events", err)
	}
	defer rows.Close()
	page := application.EventPage{JSON: []byte{'['}, Next: application.FeedPosition{Number: q.After.Number, At: now.Truncate(time.Second)}}
	var last int64
	for rows.Next() {
		var r feedRow
		if err := rows.StructScan(&r); err != nil {
			return application.EventPage{}, edgeError("read events", err)
		}
		if q.HasAfter && q.After.Number < r.Floor {
			return application.EventPage{}, application.ErrFeedExpired
		}
		last = max(last, r.Last)
		if !r.Number.Valid {
			break
		}
		at, err := time.Parse(createdAtLayout, r.CreatedAt.String)
		if err != nil {
			return application.EventPage{}, fmt.Errorf("sqlite: event %d: %w", r.Number.Int64, err)
		}
		if page.Count > 0 {
			page.JSON = append(page.JSON, ',')
		}
		if page.JSON, err = plantjson.AppendEvent(page.JSON, r.Type.String, r.Number.Int64, at, []byte(r.Item.String)); err != nil {
			return application.EventPage{}, err
		}
		page.Count++
		page.Next.Number = r.Number.Int64
	}
	if err := rows.Err(); err != nil {
		return application.EventPage{}, edgeError("read events", err)
	}
	page.JSON = append(page.JSON, ']')
	if page.Count < q.Limit {
		// Every event that follows q.After is on the page: the next one
		// will be numbered after the last handed out.
		page.Next.Number = max(page.Next.Number, last)
	}
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
