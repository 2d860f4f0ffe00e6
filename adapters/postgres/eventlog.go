package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/plantstore/plantstore/application"
)

// listEvents reads the failed ($1) or pending deliveries of one pair of
// tables, unpacked and packed, the plant payload's with NULLs for the
// event payload's columns; listBoth joins those of both pairs, oldest
// first.
const listEvents = `
SELECT id, url, plant_id, item, created_at, retry_from, attempts, trace_parent{as.more}, next_at, coalesce(last_error, '') AS last_error
FROM {events} WHERE (failed_at IS NOT NULL) = $1
UNION ALL
SELECT {b.e.id}, b.url, e.plant_id, e.item, b.created_at, b.created_at, 0, e.trace_parent{e.as.more}, b.created_at, ''
FROM {batches} AS b,
     unnest({b.ids}b.plant_ids, b.items, b.trace_parents{b.arrays}) WITH ORDINALITY AS e ({ids}plant_id, item, trace_parent{more}, n)
WHERE NOT $1`

var listBoth = plantTables.words.Replace(listEvents) + "\nUNION ALL" + envelopeTables.words.Replace(listEvents) +
	"\nORDER BY created_at, id LIMIT $2"

// ListEvents returns at most limit failed or pending events, oldest first,
// of both payloads. Pending events are unpacked ones and packed ones alike.
func (s *Store) ListEvents(ctx context.Context, failed bool, limit int) ([]application.EventStatus, error) {
	db, err := s.outboxDB()
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryxContext(ctx, listBoth, failed, limit)
	if err != nil {
		return nil, s.fail("list events", err)
	}
	defer rows.Close()
	var out []application.EventStatus
	for rows.Next() {
		var r struct {
			eventRow
			NextAt    time.Time `db:"next_at"`
			LastError string    `db:"last_error"`
		}
		if err := rows.StructScan(&r); err != nil {
			return nil, s.fail("list events", err)
		}
		out = append(out, application.EventStatus{Event: r.event(), Failed: failed, NextAt: r.NextAt, LastError: r.LastError})
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("list events", err)
	}
	return out, nil
}

// redeliver makes the failed deliveries of one pair of tables due again.
const redeliver = `UPDATE {events} SET failed_at = NULL, next_at = $1, retry_from = $1, attempts = 0, claim = NULL
    WHERE failed_at IS NOT NULL AND (cardinality($2::text[]) = 0 OR id = ANY($2::text[]))
    RETURNING 1`

// redeliverBoth redelivers those of both pairs in one statement, and
// counts them.
var redeliverBoth = `
WITH plants AS (` + plantTables.words.Replace(redeliver) + `
), envelopes AS (` + envelopeTables.words.Replace(redeliver) + `
)
SELECT (SELECT count(*) FROM plants) + (SELECT count(*) FROM envelopes)`

// Redeliver makes failed events due at now again, with a new retry window:
// those listed, or every failed one when ids is empty, of both payloads.
func (s *Store) Redeliver(ctx context.Context, now time.Time, ids []string) (int, error) {
	db, err := s.outboxDB()
	if err != nil {
		return 0, err
	}
	var n int
	if err := db.GetContext(ctx, &n, redeliverBoth, now.UTC(), textArray(ids, nil)); err != nil {
		return 0, s.fail("redeliver events", err)
	}
	return n, nil
}

// outboxStats counts the deliveries of one pair of tables; outboxStatsBoth
// adds both pairs' up.
const outboxStats = `
WITH unpacked AS (
    SELECT count(*) FILTER (WHERE failed_at IS NULL) AS pending, min(created_at) FILTER (WHERE failed_at IS NULL) AS oldest,
           count(*) FILTER (WHERE failed_at IS NOT NULL) AS failed
    FROM webhook_events
    UNION ALL
    SELECT count(*) FILTER (WHERE failed_at IS NULL), min(created_at) FILTER (WHERE failed_at IS NULL),
           count(*) FILTER (WHERE failed_at IS NOT NULL)
    FROM webhook_envelopes
), packed AS (
    SELECT coalesce(sum(cardinality(event_ids)), 0) AS pending, min(created_at) AS oldest FROM webhook_event_batches
    UNION ALL
    SELECT coalesce(sum(cardinality(plant_ids)), 0), min(created_at) FROM webhook_envelope_batches
)
SELECT (SELECT sum(pending) FROM unpacked) + (SELECT sum(pending) FROM packed),
       least((SELECT min(oldest) FROM unpacked), (SELECT min(oldest) FROM packed)),
       (SELECT sum(failed) FROM unpacked)`

// OutboxStats reports the events still to deliver, when the oldest of them
// was committed, and the events that failed, for metrics.
func (s *Store) OutboxStats(ctx context.Context) (pending int, oldest time.Time, failed int, err error) {
	db, err := s.outboxDB()
	if err != nil {
		return 0, time.Time{}, 0, err
	}
	var first sql.NullTime
	err = db.QueryRowContext(ctx, outboxStats).Scan(&pending, &first, &failed)
	if err != nil {
		return 0, time.Time{}, 0, s.fail("outbox stats", err)
	}
	return pending, first.Time, failed, nil
}
