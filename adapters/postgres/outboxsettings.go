package postgres

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// outboxSettings are the outbox's session settings (see outboxDB). Through
// a transaction pooler each claim and settlement sets synchronous_commit in
// its own transaction instead (outboxTx), and no plan is kept for a claim, so
// sequential scans need no ban.
var outboxSettings = []string{"synchronous_commit=off", "enable_seqscan=off"}

// outboxTx runs f in a transaction that commits without waiting for the
// disk, for the outbox's statements through a transaction pooler, whose
// sessions carry no settings of the store's. f's error is returned as it is;
// op names the work for the others.
func (s *Store) outboxTx(ctx context.Context, db *sqlx.DB, op string, f func(*sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		return s.fail(op, err)
	}
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.fail(op, err)
	}
	return nil
}
