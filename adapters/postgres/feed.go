package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The event feed. Every write of a plant stores its event in the statement
// that writes the plant (kinds.go): a row of plant_events with the writing
// transaction's id (xid, xid8), a number from an identity, the type, the
// plant's item as the service rendered it, and the transaction's time.
//
// Why a reader never skips an event: numbers and transaction ids are handed
// out before their transactions commit, in no order of the commits, so a
// reader that had read up to some number could meet, later, an event with a
// smaller one. The feed is therefore in (xid, number) order, and a page
// reads only events whose xid is below its snapshot's xmin: every
// transaction below it has ended, so no event can ever be committed behind
// a position a page hands out. A page that is not full hands out (xmin, 0):
// past everything it read, and before everything still to commit, so a
// reader that keeps polling moves on with the horizon. A plant's events are
// in the order of its writes since each statement holds its plants'
// advisory locks before it gets an xid (lockPlants).
//
// The horizon is the whole cluster's: a transaction that holds an xid, on
// any database of the server, holds the feed's pages back until it ends
// (docs/operations.md, "The event feed").

// feedRow is a row readFeed answers: the horizon, the time and the floor,
// and an event or NULLs.
type feedRow struct {
	Horizon     string         `db:"horizon"` // xid8, as text
	Now         time.Time      `db:"now"`
	FloorXID    string         `db:"floor_xid"`
	FloorNumber int64          `db:"floor_number"`
	XID         sql.NullString `db:"xid"`
	Number      sql.NullInt64  `db:"number"`
	Type        sql.NullString `db:"type"`
	Item        sql.NullString `db:"item"`
	CreatedAt   sql.NullTime   `db:"created_at"`
}

// readFeed is the page of at most $3 events after ($1, $2), below the
// horizon, with the horizon, the time and the floor, in one statement and
// so one snapshot: a prune committed between reading the floor and the
// events would otherwise hide events behind a position that looks fresh. A
// page without events is one row with NULLs for the event. The events come
// from a range scan of the primary key, (xid, number).
const readFeed = `
SELECT h.horizon::text AS horizon, h.now, f.xid::text AS floor_xid, f.number AS floor_number,
       e.xid::text AS xid, e.number, e.type, e.item, e.created_at
FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon, statement_timestamp() AS now) AS h
CROSS JOIN plant_event_floor AS f
LEFT JOIN LATERAL (
    SELECT xid, number, type, item, created_at FROM plant_events
    WHERE (xid, number) > ($1::xid8, $2::bigint) AND xid < h.horizon
    ORDER BY xid, number
    LIMIT $3
) AS e ON true
ORDER BY e.xid, e.number`

// ReadEvents returns the page of at most q.Limit events that follow
// q.After, rendered as the API writes it. Positions are judged by the
// database's clock, as events are stamped and pruned by it.
func (s *Store) ReadEvents(ctx context.Context, q application.FeedQuery) (application.EventPage, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	page, err := s.readEvents(ctx, q)
	s.metrics.observeReads("events", 1, time.Since(start))
	if err != nil && err != application.ErrFeedExpired {
		return application.EventPage{}, s.fail("read events", err)
	}
	return page, err
}

func (s *Store) readEvents(ctx context.Context, q application.FeedQuery) (application.EventPage, error) {
	stmt, err := s.stmts.get(ctx, s.db, readFeed)
	if err != nil {
		return application.EventPage{}, err
	}
	rows, err := stmt.QueryxContext(ctx, strconv.FormatUint(q.After.Tx, 10), q.After.Number, q.Limit)
	if err != nil {
		return application.EventPage{}, err
	}
	defer rows.Close()
	var (
		page    = application.EventPage{JSON: []byte{'['}}
		last    = q.After
		horizon uint64
	)
	for first := true; rows.Next(); first = false {
		var r feedRow
		if err := rows.StructScan(&r); err != nil {
			return application.EventPage{}, err
		}
		if first {
			if horizon, err = strconv.ParseUint(r.Horizon, 10, 64); err != nil {
				return application.EventPage{}, fmt.Errorf("feed horizon %q: %w", r.Horizon, err)
			}
			floor, err := position(r.FloorXID, r.FloorNumber)
			if err != nil {
				return application.EventPage{}, err
			}
			if q.HasAfter && (q.After.At.Before(r.Now.Add(-time.Duration(q.Retention))) || before(q.After, floor)) {
				return application.EventPage{}, application.ErrFeedExpired
			}
			last.At = r.Now.Truncate(time.Second)
		}
		if !r.Number.Valid {
			break
		}
		at := last.At
		if last, err = position(r.XID.String, r.Number.Int64); err != nil {
			return application.EventPage{}, err
		}
		last.At = at
		if page.Count > 0 {
			page.JSON = append(page.JSON, ',')
		}
		if page.JSON, err = plantjson.AppendEvent(page.JSON, r.Type.String, r.Number.Int64, r.CreatedAt.Time, []byte(r.Item.String)); err != nil {
			return application.EventPage{}, err
		}
		page.Count++
	}
	if err := rows.Err(); err != nil {
		return application.EventPage{}, err
	}
	page.JSON = append(page.JSON, ']')
	page.Next = last
	if page.Count < q.Limit {
		// Every event below the horizon that follows q.After is on the page.
		if past := (application.FeedPosition{Tx: horizon, At: last.At}); before(last, past) {
			page.Next = past
		}
	}
	return page, nil
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

// pruneEvents removes, of the first $2 events in feed order below the
// horizon, those committed more than $1 microseconds before now, and raises
// the floor to the last one it removed, in one statement: a page reads the
// floor and the events in one snapshot, so it sees both or neither. A
// concurrent prune, of another replica, waits for the rows this one
// removes and finds them gone; the floor only rises.
const pruneEvents = `
WITH doomed AS (
    SELECT xid, number FROM plant_events
    WHERE xid < pg_snapshot_xmin(pg_current_snapshot())
    ORDER BY xid, number
    LIMIT $2
), removed AS (
    DELETE FROM plant_events AS e USING doomed
    WHERE e.xid = doomed.xid AND e.number = doomed.number
      AND e.created_at < statement_timestamp() - $1::bigint * interval '1 microsecond'
    RETURNING e.xid, e.number
), raised AS (
    UPDATE plant_event_floor AS f SET xid = last.xid, number = last.number
    FROM (SELECT xid, number FROM removed ORDER BY xid DESC, number DESC LIMIT 1) AS last
    WHERE (last.xid, last.number) > (f.xid, f.number)
)
SELECT count(*) AS removed FROM removed`

// PruneEvents removes at most limit of the oldest events committed longer
// than retention ago.
func (s *Store) PruneEvents(ctx context.Context, retention application.EventRetention, limit int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	var removed int
	if err := s.db.GetContext(ctx, &removed, pruneEvents, time.Duration(retention).Microseconds(), limit); err != nil {
		return 0, s.fail("prune events", err)
	}
	return removed, nil
}

// pendingEvent is the event of one write that an update decided in Go,
// written with the write (replaceKind, removeKind).
type pendingEvent struct {
	typ  application.EventType
	item string
}

// pendingEvents are the events of a statement's writes of one kind, as
// the parallel arrays its fragment unnests, in the order of the writes.
type pendingEvents struct {
	types, items []string
	ids          []int64
}

func (e *pendingEvents) add(id domain.ID, events []pendingEvent) {
	for _, ev := range events {
		e.types = append(e.types, string(ev.typ))
		e.ids = append(e.ids, int64(id))
		e.items = append(e.items, ev.item)
	}
}

// args are the arrays of types, ids and items.
func (e pendingEvents) args() []any {
	return []any{textArray(e.types, nil), bigintArray(e.ids), textArray(e.items, nil)}
}
