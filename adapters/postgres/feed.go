package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The event feed. Every write of a plant stores its event in the statement
// that writes the plant (kinds.go), and a statement stores all its events
// in one row of plant_events (eventsRow): the writing transaction's id
// (xid, xid8), the events' feed lines, each with its number from a
// sequence, its type, the transaction's time and the plant's item as the
// service rendered it, their count, and the last one's number, which keys
// the row.
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
// A row's events are a range of numbers, drawn while its statement ran, so
// the rows of one transaction hold ranges in the order of its statements
// and the key, (xid, last number), orders rows as the feed orders their
// events: the rows after a position are those with an event after it, and
// only the first of them may hold events at or before it, which the
// service skips.
//
// The horizon is the whole cluster's: a transaction that holds an xid, on
// any database of the server, holds the feed's pages back until it ends
// (docs/operations.md, "The event feed").

// feedRow is the row readFeedPages answers for one reader: its number in
// the batch, the horizon, the time and the floor, and the lines of the
// rows of plant_events its page reads: their count and the lines, one an
// event (an item is JSON, in which a line break is always escaped), in feed
// order; NULL for an empty page. An event's line is its transaction id,
// number, type, time (Unix microseconds) and item, space-separated
// (plant_event_line). The first row may begin with events at or before the
// reader's position, and the last may hold more than the page takes.
type feedRow struct {
	N           int64          `db:"n"`
	Horizon     string         `db:"horizon"` // xid8, as text
	Now         time.Time      `db:"now"`
	FloorXID    string         `db:"floor_xid"`
	FloorNumber int64          `db:"floor_number"`
	Count       int            `db:"count"`
	Lines       sql.NullString `db:"lines"`
}

// readFeedPages reads the pages of many readers of the feed at once, as
// lists and point reads are gathered: each reader is numbered n and gives
// the position it reads after and its page size. Each page reads the rows
// whose events follow (after_xid, after_number), below the horizon, until
// the rows after the first hold lim events: at most lim + 1 rows, since
// every row holds one event or more, and every row below the horizon after
// the position when they hold fewer, so that a page that is not full is
// complete (feedPage). The horizon, the time and the floor come with every
// page, all in one statement and so one snapshot: a prune committed between
// reading the floor and the events would otherwise hide events behind a
// position that looks fresh. The rows come from a range scan of the
// primary key, (xid, number), and reach string_agg in the key's order (the
// documented way of ordering an aggregate's input, which pageOfEvents
// checks). A page is one row, as a page of plants is, since reading a
// hundred rows into values cost the service four times what the page's
// JSON does (docs/performance.md, "The event feed"). Nothing here renders
// JSON: the service renders each event around its item.
const readFeedPages = `
SELECT q.n, h.horizon::text AS horizon, h.now, f.xid::text AS floor_xid, f.number AS floor_number,
       p.count, p.lines
FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon, statement_timestamp() AS now) AS h
CROSS JOIN plant_event_floor AS f
CROSS JOIN unnest($1::xid8[], $2::bigint[], $3::int[]) WITH ORDINALITY AS q (after_xid, after_number, lim, n)
CROSS JOIN LATERAL (
    SELECT coalesce(sum(e.count), 0)::int AS count, string_agg(e.lines, E'\n') AS lines
    FROM (
        SELECT r.count, r.lines, sum(r.count) OVER w - r.count - first_value(r.count) OVER w AS ahead
        FROM (
            SELECT xid, number, count, lines FROM plant_events
            WHERE (xid, number) > (q.after_xid, q.after_number) AND xid < h.horizon
            ORDER BY xid, number
            LIMIT q.lim + 1
        ) AS r
        WINDOW w AS (ORDER BY r.xid, r.number)
    ) AS e
    WHERE e.ahead < q.lim
) AS p`

// ReadEvents returns the page of at most q.Limit events that follow
// q.After, rendered as the API writes it. Pages read at the same time share
// one query (feedBatch).
func (s *Store) ReadEvents(ctx context.Context, q application.FeedQuery) (application.EventPage, error) {
	page, err := s.feeds.Submit(ctx, q)
	if errors.Is(err, application.ErrFeedExpired) {
		return application.EventPage{}, err
	}
	return page, submitError(err)
}

// feedBatch is the feed batcher's flush function: one query for every
// page waiting.
func (s *Store) feedBatch(ctx context.Context, qs []application.FeedQuery) []groupcommit.Result[application.EventPage] {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	out := make([]groupcommit.Result[application.EventPage], len(qs))
	if err := s.readFeed(ctx, qs, out); err != nil {
		failed := s.fail("read events", err)
		for i := range out {
			out[i] = groupcommit.Result[application.EventPage]{Err: failed}
		}
	}
	s.metrics.observeReads("events", len(qs), time.Since(start))
	return out
}

// readFeed runs the feed query for qs and sets the page of each in out, or
// ErrFeedExpired for a reader whose position is past the retention.
// Positions are judged by the database's clock, as events are stamped and
// pruned by it.
func (s *Store) readFeed(ctx context.Context, qs []application.FeedQuery, out []groupcommit.Result[application.EventPage]) error {
	xids, numbers, limits := make([]string, len(qs)), make([]int64, len(qs)), make([]int64, len(qs))
	for i, q := range qs {
		xids[i], numbers[i], limits[i] = strconv.FormatUint(q.After.Tx, 10), q.After.Number, int64(q.Limit)
	}
	stmt, err := s.stmts.get(ctx, s.db, readFeedPages)
	if err != nil {
		return err
	}
	rows, err := stmt.QueryxContext(ctx, textArray(xids, nil), bigintArray(numbers), bigintArray(limits))
	if err != nil {
		return err
	}
	defer rows.Close()
	answered := 0
	for ; rows.Next(); answered++ {
		var r feedRow
		if err := rows.StructScan(&r); err != nil {
			return err
		}
		if r.N < 1 || int(r.N) > len(qs) {
			return fmt.Errorf("the feed answered for reader %d of %d", r.N, len(qs))
		}
		i := r.N - 1
		out[i].Value, out[i].Err = feedPage(r, qs[i])
		if out[i].Err != nil && !errors.Is(out[i].Err, application.ErrFeedExpired) {
			return out[i].Err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	switch answered {
	case len(qs):
		return nil
	case 0:
		return errors.New("the event feed has no floor: plant_event_floor lost its row")
	}
	return fmt.Errorf("the feed answered %d of %d readers", answered, len(qs))
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
