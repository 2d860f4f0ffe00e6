package postgres

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/application"
)

// Settle records the outcomes of attempts, in one statement per pair of
// tables whose deliveries they settle (usually one).
func (s *Store) Settle(ctx context.Context, outcomes []application.Settlement) error {
	db, err := s.outboxDB()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	for _, t := range outboxPairs {
		var mine []application.Settlement
		for _, o := range outcomes {
			if pairOfClaim(o.Claim) == t {
				mine = append(mine, o)
			}
		}
		if len(mine) == 0 {
			continue
		}
		if err := s.settle(ctx, db, t, mine); err != nil {
			return err
		}
	}
	return nil
}

// settle records the outcomes of attempts at deliveries of the pair t.
func (s *Store) settle(ctx context.Context, db *sqlx.DB, t *outboxTables, outcomes []application.Settlement) error {
	n := len(outcomes)
	ids, claims, retryAt, errs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	delivered, failed := make([]bool, n), make([]bool, n)
	for i, o := range outcomes {
		ids[i], claims[i], errs[i] = o.ID, o.Claim, o.Error
		delivered[i], failed[i] = o.Delivered, o.Failed
		retryAt[i] = o.RetryAt.UTC().Format(time.RFC3339Nano)
	}
	args := []any{textArray(ids, nil), textArray(claims, nil),
		boolArray(delivered), boolArray(failed), textArray(retryAt, nil), textArray(errs, nil)}
	settle := func(q sqlx.ExecerContext) error {
		if _, err := q.ExecContext(ctx, t.settle, args...); err != nil {
			return s.fail("settle events", err)
		}
		return nil
	}
	if s.cfg.Pooler.shared() {
		return s.outboxTx(ctx, db, "settle events", func(tx *sqlx.Tx) error { return settle(tx) })
	}
	return settle(db)
}
