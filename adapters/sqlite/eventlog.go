package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/plantstore/plantstore/application"
)

// listEvents reads failed or pending events, oldest first: ?1 says which,
// ?2 is the limit; listEnvelopes reads the event payload's.
var (
	listEvents = `SELECT ` + eventColumns.list() + `
FROM webhook_events WHERE (failed_at IS NOT NULL) = ?1 ORDER BY created_at, id LIMIT ?2`
	listEnvelopes = `SELECT ` + envelopeColumns.list() + `
FROM webhook_envelopes WHERE (failed_at IS NOT NULL) = ?1 ORDER BY created_at, id LIMIT ?2`
)

// ListEvents returns at most limit failed or pending events of both
// payloads, oldest first.
func (s *Store) ListEvents(ctx context.Context, failed bool, limit int) ([]application.EventStatus, error) {
	plants, err := listFrom[eventRow](ctx, s, listEvents, failed, limit)
	if err != nil {
		return nil, err
	}
	envelopes, err := listFrom[envelopeRow](ctx, s, listEnvelopes, failed, limit)
	if err != nil {
		return nil, err
	}
	out := append(plants, envelopes...)
	slices.SortStableFunc(out, func(a, b application.EventStatus) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out[:min(limit, len(out))], nil
}

// listFrom lists the failed or pending events of one table.
func listFrom[R outboxRow](ctx context.Context, s *Store, query string, failed bool, limit int) ([]application.EventStatus, error) {
	var rows []R
	if err := s.selectRows(ctx, &rows, query, failed, limit); err != nil {
		return nil, edgeError("list events", err)
	}
	var out []application.EventStatus
	for _, row := range rows {
		event, err := row.event()
		if err != nil {
			return nil, err
		}
		nextAt, lastError := row.status()
		e := application.EventStatus{Event: event, Failed: failed, LastError: lastError.String}
		e.NextAt, _ = time.Parse(createdAtLayout, nextAt)
		out = append(out, e)
	}
	return out, nil
}

// Redeliver makes failed events due at now again, with a new retry window:
// those listed, or every failed one when ids is empty, of both payloads.
func (s *Store) Redeliver(ctx context.Context, now time.Time, ids []string) (int, error) {
	total := 0
	for _, table := range []string{"webhook_events", "webhook_envelopes"} {
		query := `UPDATE ` + table + ` SET failed_at = NULL, next_at = ?, retry_from = ?, attempts = 0, claim = NULL
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
			return total, edgeError("redeliver events", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, edgeError("redeliver events", err)
		}
		total += int(n)
	}
	return total, nil
}

// outboxStats counts the outbox's events, of both payloads, scanned into
// an outboxStatsRow.
const outboxStats = `
SELECT count(*) FILTER (WHERE failed_at IS NULL) AS pending,
       min(created_at) FILTER (WHERE failed_at IS NULL) AS oldest,
       count(*) FILTER (WHERE failed_at IS NOT NULL) AS failed
FROM (SELECT failed_at, created_at FROM webhook_events UNION ALL SELECT failed_at, created_at FROM webhook_envelopes)`

type outboxStatsRow struct {
	Pending int            `db:"pending"`
	Oldest  sql.NullString `db:"oldest"`
	Failed  int            `db:"failed"`
}

// OutboxStats reports the pending events, the oldest one's commit and the
// failed events.
func (s *Store) OutboxStats(ctx context.Context) (pending int, oldest time.Time, failed int, err error) {
	var r outboxStatsRow
	if err := s.get(ctx, &r, outboxStats); err != nil {
		return 0, time.Time{}, 0, edgeError("outbox stats", err)
	}
	if r.Oldest.Valid {
		oldest, _ = time.Parse(createdAtLayout, r.Oldest.String)
	}
	return r.Pending, oldest, r.Failed, nil
}
