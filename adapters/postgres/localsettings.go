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

// localTx runs f in a transaction whose first statement sets settings
// ("name = value; ...") for that transaction alone (SET LOCAL): through a
// transaction pooler, sessions carry no settings of the store's, and a
// setting made for a session would stay on a server session that others
// share. Errors are returned as they came.
func localTx(ctx context.Context, db *sqlx.DB, settings string, f func(*sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	if _, err := tx.ExecContext(ctx, "SET LOCAL "+settings); err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// outboxTx runs f in a transaction that commits without waiting for the
// disk, for the outbox's statements through a transaction pooler. f's error
// is returned as it is; op names the work for the others.
func (s *Store) outboxTx(ctx context.Context, db *sqlx.DB, op string, f func(*sqlx.Tx) error) error {
	var fErr error
	err := localTx(ctx, db, "synchronous_commit = off", func(tx *sqlx.Tx) error {
		fErr = f(tx)
		return fErr
	})
	switch {
	case fErr != nil:
		return fErr
	case err != nil:
		return s.fail(op, err)
	}
	return nil
}
