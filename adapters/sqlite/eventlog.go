package sqlite

import (
	"context"
	"strings"
	"time"

	"github.com/plantstore/plantstore/application"
)

// ListEvents returns at most limit failed or pending events, oldest first.
func (s *Store) ListEvents(ctx context.Context, failed bool, limit int) ([]application.EventStatus, error) {
	rows, err := s.read.QueryContext(ctx, `
SELECT id, url, plant_id, name, tag, created_at, retry_from, attempts, next_at, coalesce(last_error, '')
FROM webhook_events WHERE (failed_at IS NOT NULL) = ? ORDER BY created_at, id LIMIT ?`, failed, limit)
	if err != nil {
		return nil, edgeError("list events", err)
	}
	defer rows.Close()
	var out []application.EventStatus
	for rows.Next() {
		e := application.EventStatus{Failed: failed}
		var next string
		if err := s.scanEvent(rows, &e.Event, &next, &e.LastError); err != nil {
			return nil, err
		}
		e.NextAt, _ = time.Parse(createdAtLayout, next)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, edgeError("list events", err)
	}
	return out, nil
}

// Redeliver makes failed events due at now again, with a new retry window:
// those listed, or every failed one when ids is empty.
func (s *Store) Redeliver(ctx context.Context, now time.Time, ids []string) (int, error) {
	query := `UPDATE webhook_events SET failed_at = NULL, next_at = ?, retry_from = ?, attempts = 0, claim = NULL
		WHERE failed_at IS NOT NULL`
	args := []any{stamp(now), stamp(now)}
	if len(ids) > 0 {
		query += ` AND id IN (?` + strings.Repeat(`, ?`, len(ids)-1) + `)`
		for _, id := range ids {
			args = append(args, id)
		}
	}
	res, err := s.write.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, edgeError("redeliver events", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// OutboxStats reports the pending events, the oldest one's commit and the
// failed events.
func (s *Store) OutboxStats(ctx context.Context) (pending int, oldest time.Time, failed int, err error) {
	var first *string
	err = s.read.QueryRowContext(ctx, `
SELECT count(*) FILTER (WHERE failed_at IS NULL), min(created_at) FILTER (WHERE failed_at IS NULL),
       count(*) FILTER (WHERE failed_at IS NOT NULL)
FROM webhook_events`).Scan(&pending, &first, &failed)
	if err != nil {
		return 0, time.Time{}, 0, edgeError("outbox stats", err)
	}
	if first != nil {
		oldest, _ = time.Parse(createdAtLayout, *first)
	}
	return pending, oldest, failed, nil
}
