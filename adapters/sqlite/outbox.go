package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/application"
)

// announcePlant stores one delivery of the plant payload, announceEnvelope
// one of the event payload.
var (
	announcePlant    = `INSERT INTO webhook_events (` + eventColumns.list() + `) VALUES (` + eventColumns.params() + `)`
	announceEnvelope = `INSERT INTO webhook_envelopes (` + envelopeColumns.list() + `) VALUES (` + envelopeColumns.params() + `)`
)

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
// receiver, ?4 now and ?5 the limit. claimEnvelopes does the same in the
// event payload's table.
var (
	claimEvents = `
UPDATE webhook_events SET attempts = attempts + 1, next_at = ?1, claim = ?2
WHERE id IN (SELECT id FROM webhook_events WHERE failed_at IS NULL AND url = ?3 AND next_at <= ?4 ORDER BY next_at LIMIT ?5)
RETURNING ` + eventColumns.list()
	claimEnvelopes = `
UPDATE webhook_envelopes SET attempts = attempts + 1, next_at = ?1, claim = ?2
WHERE id IN (SELECT id FROM webhook_envelopes WHERE failed_at IS NULL AND url = ?3 AND next_at <= ?4 ORDER BY next_at LIMIT ?5)
RETURNING ` + envelopeColumns.list()
)

// envelopeClaims start the claims of the event payload's deliveries: a
// settlement goes to the table of its claim.
const envelopeClaims = "env."

// outboxRow is a row of either table of the outbox.
type outboxRow interface {
	eventRow | envelopeRow
	event() (application.Event, error)
	status() (nextAt string, lastError sql.NullString)
}

// ClaimDue claims at most limit of url's due events, oldest first, until
// now+lease: from the table of the store's payload first, then from the
// other one, which holds the deliveries written before the setting changed.
// The single writer makes claims exclusive.
func (s *Store) ClaimDue(ctx context.Context, url string, now time.Time, lease time.Duration, limit int) ([]application.Event, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	var events []application.Event
	err := s.relaxed(ctx, func(conn *sqlx.Conn) error {
		plants := func() (err error) {
			events, err = claimFrom[eventRow](ctx, conn, claimEvents, token, events, stamp(now.Add(lease)), url, stamp(now), limit-len(events))
			return err
		}
		envelopes := func() (err error) {
			events, err = claimFrom[envelopeRow](ctx, conn, claimEnvelopes, envelopeClaims+token, events, stamp(now.Add(lease)), url, stamp(now), limit-len(events))
			return err
		}
		first, second := plants, envelopes
		if s.envelopes {
			first, second = envelopes, plants
		}
		if err := first(); err != nil || len(events) == limit {
			return err
		}
		return second()
	})
	if err != nil {
		return nil, edgeError("claim events", err)
	}
	return events, nil
}

// claimFrom runs a claiming statement, with the claim and the rest of args,
// and appends the events it claimed to events.
func claimFrom[R outboxRow](ctx context.Context, conn *sqlx.Conn, query, claim string, events []application.Event, end, url, now string, limit int) ([]application.Event, error) {
	rows, err := conn.QueryxContext(ctx, query, end, claim, url, now, limit)
	if err != nil {
		return events, err
	}
	defer rows.Close()
	for rows.Next() {
		var row R
		if err := rows.StructScan(&row); err != nil {
			return events, err
		}
		e, err := row.event()
		if err != nil {
			return events, err
		}
		e.Attempts-- // the claim counted this attempt already
		e.Claim = claim
		events = append(events, e)
	}
	return events, rows.Err()
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
			table := "webhook_events"
			if strings.HasPrefix(o.Claim, envelopeClaims) {
				table = "webhook_envelopes"
			}
			if o.Delivered {
				_, err = tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = ? AND claim = ?`, o.ID, o.Claim)
			} else {
				var failedAt *string
				if o.Failed {
					v := stamp(time.Now())
					failedAt = &v
				}
				_, err = tx.ExecContext(ctx, `UPDATE `+table+` SET next_at = ?, claim = NULL, last_error = ?, failed_at = ?
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
