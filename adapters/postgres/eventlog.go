package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/plantstore/plantstore/application"
)

// ListEvents returns at most limit failed or pending events, oldest first.
// Pending events are unpacked ones and packed ones alike.
func (s *Store) ListEvents(ctx context.Context, failed bool, limit int) ([]application.EventStatus, error) {
	db, err := s.outboxDB()
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryxContext(ctx, `
SELECT id, url, plant_id, item, created_at, retry_from, attempts, trace_parent, next_at, coalesce(last_error, '') AS last_error
FROM webhook_events WHERE (failed_at IS NOT NULL) = $1
UNION ALL
SELECT e.id, b.url, e.plant_id, e.item, b.created_at, b.created_at, 0, e.trace_parent, b.created_at, ''
FROM webhook_event_batches AS b,
     unnest(b.event_ids, b.plant_ids, b.items, b.trace_parents) AS e (id, plant_id, item, trace_parent)
WHERE NOT $1
ORDER BY created_at, id LIMIT $2`, failed, limit)
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

// Redeliver makes failed events due at now again, with a new retry window:
// those listed, or every failed one when ids is empty.
func (s *Store) Redeliver(ctx context.Context, now time.Time, ids []string) (int, error) {
	db, err := s.outboxDB()
	if err != nil {
		return 0, err
	}
	res, err := db.ExecContext(ctx, `
UPDATE webhook_events SET failed_at = NULL, next_at = $1, retry_from = $1, attempts = 0, claim = NULL
WHERE failed_at IS NOT NULL AND (cardinality($2::text[]) = 0 OR id = ANY($2::text[]))`, now.UTC(), textArray(ids, nil))
	if err != nil {
		return 0, s.fail("redeliver events", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// OutboxStats reports the events still to deliver, when the oldest of them
// was committed, and the events that failed, for metrics.
func (s *Store) OutboxStats(ctx context.Context) (pending int, oldest time.Time, failed int, err error) {
	db, err := s.outboxDB()
	if err != nil {
		return 0, time.Time{}, 0, err
	}
	var first sql.NullTime
	err = db.QueryRowContext(ctx, `
WITH unpacked AS (
    SELECT count(*) FILTER (WHERE failed_at IS NULL) AS pending, min(created_at) FILTER (WHERE failed_at IS NULL) AS oldest,
           count(*) FILTER (WHERE failed_at IS NOT NULL) AS failed
    FROM webhook_events
), packed AS (
    SELECT coalesce(sum(cardinality(event_ids)), 0) AS pending, min(created_at) AS oldest FROM webhook_event_batches
)
SELECT unpacked.pending + packed.pending, least(unpacked.oldest, packed.oldest), unpacked.failed
FROM unpacked, packed`).Scan(&pending, &first, &failed)
	if err != nil {
		return 0, time.Time{}, 0, s.fail("outbox stats", err)
	}
	return pending, first.Time, failed, nil
}
