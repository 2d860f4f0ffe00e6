package postgres

import (
	"context"
	"time"

	"github.com/plantstore/plantstore/application"
)

// pruneEvents removes, of the first $2 rows of events in feed order below
// the horizon, those committed more than $1 microseconds before now, and
// raises the floor to the last event it removed, in one statement: a page
// reads the floor and the events in one snapshot, so it sees both or
// neither. It removes a statement's events together, as they are stored
// (eventsRow), and counts them. A concurrent prune, of another replica,
// waits for the rows this one removes and finds them gone; the floor only
// rises.
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
    RETURNING e.xid, e.number, e.count
), raised AS (
    UPDATE plant_event_floor AS f SET xid = last.xid, number = last.number
    FROM (SELECT xid, number FROM removed ORDER BY xid DESC, number DESC LIMIT 1) AS last
    WHERE (last.xid, last.number) > (f.xid, f.number)
)
SELECT coalesce(sum(count), 0) AS removed FROM removed`

// PruneEvents removes the oldest events committed longer than retention
// ago, at most limit write statements' of them, and returns how many events
// it removed.
func (s *Store) PruneEvents(ctx context.Context, retention application.EventRetention, limit int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	var removed int
	if err := s.db.GetContext(ctx, &removed, pruneEvents, time.Duration(retention).Microseconds(), limit); err != nil {
		return 0, s.fail("prune events", err)
	}
	return removed, nil
}
