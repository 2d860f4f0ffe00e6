package postgres

import (
	"cmp"
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
// a position a page hands out. A page that is not full hands out the
// position past its last event's transaction, (xid + 1, 0): past everything
// it read, and before everything still to commit, on this server and on a
// standby promoted in its place, whose next transaction ids may be below
// the old primary's horizon but never below a transaction whose events it
// has (feedPage). A plant's events are
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
// the batch, the time and the floor, and the lines of the
// rows of plant_events its page takes: their count and the lines, one an
// event (an item is JSON, in which a line break is always escaped), in feed
// order; NULL for an empty page. An event's line is its transaction id,
// number, type, time (Unix microseconds) and item, space-separated
// (plant_event_line). The first row may begin with events at or before the
// reader's position, and the last may hold more than the page takes. Rows
// and RowEvents are how many rows the page read, and the events they hold,
// those it did not take included.
type feedRow struct {
	N           int64          `db:"n"`
	Now         time.Time      `db:"now"`
	FloorXID    string         `db:"floor_xid"`
	FloorNumber int64          `db:"floor_number"`
	Count       int            `db:"count"`
	Lines       sql.NullString `db:"lines"`
	Rows        int            `db:"rows"`
	RowEvents   int            `db:"row_events"`
}

// readFeedPages reads the pages of many readers of the feed at once, as
// lists and point reads are gathered: each reader is numbered n and gives
// the position it reads after, its page size and how many rows it may read
// (its bound). Each page reads the rows whose events follow (after_xid,
// after_number), below the horizon, by a range scan of the primary key,
// (xid, number), of at most bound rows, and takes them until the rows after
// the first hold lim events (ahead counts them): every row holds one event
// or more, so a bound of lim + 1 rows always suffices, and a page that is
// not full and read fewer rows than its bound holds every event below the
// horizon after its position (feedPage). A smaller bound, from the size of
// the rows pages read before (rowSize), saves reading rows the page does
// not take; a page it cuts short is read again. Where rows held about one
// event lately, readWholeFeedPages reads the same rows and takes them all.
// The horizon, the time and the floor come with every page, all in one
// statement and so one snapshot: a prune committed between reading the
// floor and the events would otherwise hide events behind a position that
// looks fresh. The rows reach string_agg in the key's order (the documented way of ordering an
// aggregate's input, which pageOfEvents checks). A page is one row, as a
// page of plants is, since reading a hundred rows into values cost the
// service four times what the page's JSON does (docs/performance.md, "The
// event feed"). Nothing here renders JSON: the service renders each event
// around its item.
const feedPagesQuery = `
SELECT q.n, h.now, f.xid::text AS floor_xid, f.number AS floor_number,
       p.count, p.lines, p.rows, p.row_events
FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon, statement_timestamp() AS now) AS h
CROSS JOIN plant_event_floor AS f
CROSS JOIN unnest($1::xid8[], $2::bigint[], $3::int[], $4::int[]) WITH ORDINALITY AS q (after_xid, after_number, lim, bound, n)
CROSS JOIN LATERAL (%s) AS p`

// pageRows are the rows a page reads: at most bound, in the key's order.
const pageRows = `
            SELECT xid, number, count, lines FROM plant_events
            WHERE (xid, number) > (q.after_xid, q.after_number) AND xid < h.horizon
            ORDER BY xid, number
            LIMIT q.bound`

var (
	readFeedPages = fmt.Sprintf(feedPagesQuery, `
    SELECT coalesce(sum(e.count) FILTER (WHERE e.ahead < q.lim), 0)::int AS count,
           string_agg(e.lines, E'\n') FILTER (WHERE e.ahead < q.lim) AS lines,
           count(*)::int AS rows, coalesce(sum(e.count), 0)::int AS row_events
    FROM (
        SELECT r.count, r.lines, sum(r.count) OVER w - r.count - first_value(r.count) OVER w AS ahead
        FROM (`+pageRows+`
        ) AS r
        WINDOW w AS (ORDER BY r.xid, r.number)
    ) AS e
`)
	// readWholeFeedPages takes every row a page reads, for rows of about
	// one event, which a page takes nearly all of: deciding which to take
	// cost PostgreSQL more than the rows it would leave (docs/performance.md,
	// "A statement's events in one row"). pageOfEvents stops at the page's
	// size.
	readWholeFeedPages = fmt.Sprintf(feedPagesQuery, `
    SELECT coalesce(sum(r.count), 0)::int AS count, string_agg(r.lines, E'\n') AS lines,
           count(*)::int AS rows, coalesce(sum(r.count), 0)::int AS row_events
    FROM (`+pageRows+`
    ) AS r
`)
)

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

// readFeed reads the page of each of qs into out, or ErrFeedExpired for a
// reader whose position is past the retention. Positions are judged by the
// database's clock, as events are stamped and pruned by it. Each page reads
// at most the rows that pages of its size needed lately (rowSize); the
// pages that bound cut short are read again, in one more statement, with
// the bound that always suffices.
func (s *Store) readFeed(ctx context.Context, qs []application.FeedQuery, out []groupcommit.Result[application.EventPage]) error {
	bounds, query := make([]int, len(qs)), readFeedPages
	for i, q := range qs {
		bounds[i] = s.feedRows.bound(q.Limit)
	}
	if s.feedRows.single() {
		query = readWholeFeedPages
	}
	short, err := s.readFeedRows(ctx, query, qs, bounds, out)
	if err != nil || len(short) == 0 {
		return err
	}
	again, always := make([]application.FeedQuery, len(short)), make([]int, len(short))
	for k, i := range short {
		again[k], always[k] = qs[i], qs[i].Limit+1
	}
	pages := make([]groupcommit.Result[application.EventPage], len(again))
	if stillShort, err := s.readFeedRows(ctx, query, again, always, pages); err != nil || len(stillShort) > 0 {
		return cmp.Or(err, fmt.Errorf("%d feed pages cut short by a bound of one row an event", len(stillShort)))
	}
	for k, i := range short {
		out[i] = pages[k]
	}
	return nil
}

// readFeedRows runs query, readFeedPages or readWholeFeedPages, for qs,
// each reading at most its bound of rows, and sets the page of each in out;
// it returns the readers whose page its bound cut short, which it leaves
// unset.
func (s *Store) readFeedRows(ctx context.Context, query string, qs []application.FeedQuery, bounds []int, out []groupcommit.Result[application.EventPage]) (short []int, err error) {
	xids, numbers, limits, rowBounds := make([]string, len(qs)), make([]int64, len(qs)), make([]int64, len(qs)), make([]int64, len(qs))
	for i, q := range qs {
		xids[i], numbers[i], limits[i], rowBounds[i] = strconv.FormatUint(q.After.Tx, 10), q.After.Number, int64(q.Limit), int64(bounds[i])
	}
	stmt, err := s.stmts.get(ctx, s.db, query)
	if err != nil {
		return nil, err
	}
	rows, err := stmt.QueryxContext(ctx, textArray(xids, nil), bigintArray(numbers), bigintArray(limits), bigintArray(rowBounds))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	answered, read, events := 0, 0, 0
	for ; rows.Next(); answered++ {
		var r feedRow
		if err := rows.StructScan(&r); err != nil {
			return nil, err
		}
		if r.N < 1 || int(r.N) > len(qs) {
			return nil, fmt.Errorf("the feed answered for reader %d of %d", r.N, len(qs))
		}
		i := r.N - 1
		read, events = read+r.Rows, events+r.RowEvents
		page, complete, err := feedPage(r, qs[i], bounds[i])
		switch {
		case err != nil && !errors.Is(err, application.ErrFeedExpired):
			return nil, err
		case err == nil && !complete:
			short = append(short, int(i))
		default:
			out[i].Value, out[i].Err = page, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	s.feedRows.observe(read, events)
	switch answered {
	case len(qs):
		return short, nil
	case 0:
		return nil, errors.New("the event feed has no floor: plant_event_floor lost its row")
	}
	return nil, fmt.Errorf("the feed answered %d of %d readers", answered, len(qs))
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
