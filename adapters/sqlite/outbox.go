package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/application"
)

// announcePlant stores one event.
var announcePlant = `INSERT INTO webhook_events (` + eventColumns.list() + `) VALUES (` + eventColumns.params() + `)`

// announceOne writes the events of a stored plant, one per receiver, in the
// transaction that stored it. Each keeps item, the plant as its row keeps
// it.
func (s *Store) announceOne(ctx context.Context, announce *sqlx.NamedStmt, rec application.Record, item string) error {
	for _, row := range eventRowsOf(rec, item, s.receivers) {
		if _, err := announce.ExecContext(ctx, row); err != nil {
			return edgeError("announce plant", err)
		}
	}
	return nil
}

// newEventID is a random webhook-id.
func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

func stamp(t time.Time) string { return t.UTC().Format(createdAtLayout) }

// Receivers are the URLs the store writes events for.
func (s *Store) Receivers() []string { return slices.Clone(s.receivers) }

// claimEvents claims url's due events, oldest first, and answers them as
// they are once claimed. ?1 is the end of the claim, ?2 the claim, ?3 the
// receiver, ?4 now and ?5 the limit.
var claimEvents = `
UPDATE webhook_events SET attempts = attempts + 1, next_at = ?1, claim = ?2
WHERE id IN (SELECT id FROM webhook_events WHERE failed_at IS NULL AND url = ?3 AND next_at <= ?4 ORDER BY next_at LIMIT ?5)
RETURNING ` + eventColumns.list()

// ClaimDue claims at most limit of url's due events, oldest first, until
// now+lease. The single writer makes claims exclusive.
func (s *Store) ClaimDue(ctx context.Context, url string, now time.Time, lease time.Duration, limit int) ([]application.Event, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	claim := hex.EncodeToString(b[:])
	var events []application.Event
	err := s.relaxed(ctx, func(conn *sqlx.Conn) error {
		rows, err := conn.QueryxContext(ctx, claimEvents, stamp(now.Add(lease)), claim, url, stamp(now), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var row eventRow
			if err := rows.StructScan(&row); err != nil {
				return err
			}
			e, err := row.event()
			if err != nil {
				return err
			}
			e.Attempts-- // the claim counted this attempt already
			e.Claim = claim
			events = append(events, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, edgeError("claim events", err)
	}
	return events, nil
}

// Settle records the outcomes of attempts in one transaction.
func (s *Store) Settle(ctx context.Context, outcomes []application.Settlement) error {
	err := s.relaxed(ctx, func(conn *sqlx.Conn) error {
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }()
		for _, o := range outcomes {
			if o.Delivered {
				_, err = tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE id = ? AND claim = ?`, o.ID, o.Claim)
			} else {
				var failedAt *string
				if o.Failed {
					v := stamp(time.Now())
					failedAt = &v
				}
				_, err = tx.ExecContext(ctx, `UPDATE webhook_events SET next_at = ?, claim = NULL, last_error = ?, failed_at = ?
				WHERE id = ? AND claim = ?`, stamp(o.RetryAt), o.Error, failedAt, o.ID, o.Claim)
			}
			if err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	if err != nil {
		return edgeError("settle events", err)
	}
	return nil
}

// relaxed runs fn on the writer with synchronous=NORMAL: its commits reach
// the WAL, and survive a crash of the process, without waiting for an
// fsync. Claims and settlements can afford that: one lost to a power cut
// leaves its event as it was before (a lost claim: due again; a lost
// settlement: due again when its claim's lease ends, or counted as failed
// once more), and the event is sent once more, which at-least-once delivery
// allows. The next create's FULL commit makes the WAL before it durable too.
// An fsync for each of them would take the one writer from the creates: at
// 2,000 creates per second the claims and settlements are as many commits
// again. fn must use conn, never s.write, which conn holds. The writer is
// back to FULL before anything else uses it; a connection that cannot be
// switched back, or whose fn panicked, is discarded, and its replacement
// opens with FULL.
func (s *Store) relaxed(ctx context.Context, fn func(conn *sqlx.Conn) error) error {
	conn, err := s.write.Connx(ctx)
	if err != nil {
		return err
	}
	durable := false
	defer func() {
		if !durable {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = conn.Close()
	}()
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = NORMAL"); err != nil {
		return err
	}
	fnErr := fn(conn)
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA synchronous = FULL"); err != nil {
		return errors.Join(fnErr, err)
	}
	durable = true
	return fnErr
}

// Committed receives a signal after a batch stored events.
func (s *Store) Committed() <-chan struct{} { return s.committed }
