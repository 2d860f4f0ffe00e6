package postgres

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/application"
)

// The outbox's statements, prepared on first use. A claim takes due events
// with FOR UPDATE SKIP LOCKED, so that replicas claiming at once take
// different events, and moves next_at to the end of the claim; a settlement
// presents the claim again and changes nothing once another replica holds
// the event.
//
// A claim is a prepared statement: planned afresh each time, it cost
// PostgreSQL twice as much per delivered event, most of it planning (whose
// estimate for a constant beyond the statistics reads the due index's
// actual lowest entry, past those that settled events left behind). The
// limit of both claiming statements is written into their text, one
// statement per limit (at most the dispatcher's concurrency), since a
// generic plan takes a parameter's limit to be a tenth of the table.
// Settlements are planned each time: their ids come as arrays whose length
// only a custom plan knows. Through a transaction pooler nothing is prepared
// (see statements), and claims are planned each time too.
//
// Each statement is written once for both pairs of tables (outboxTables),
// the words in braces standing for a pair's tables and its columns beyond
// the plant payload's.
const (
	// claimEvents claims a receiver's due events that are no later than its
	// oldest packed row: events committed together are due from their commit and
	// come before retries that fell due after it, so a receiver's backlog
	// of retries does not hold back every new event (unpackEvents then
	// takes the packed ones).
	claimEvents = `
UPDATE {events} AS e
SET attempts = e.attempts + 1, next_at = $2, claim = $3
FROM (
    SELECT id FROM {events}
    WHERE failed_at IS NULL AND url = $4
      AND next_at <= LEAST($1, (SELECT created_at FROM {batches} WHERE url = $4 ORDER BY id LIMIT 1))
    ORDER BY next_at
    LIMIT %d
    FOR UPDATE SKIP LOCKED
) AS due
WHERE e.id = due.id
RETURNING e.id, e.url, e.plant_id, e.item, e.created_at, e.retry_from, e.attempts - 1 AS attempts, e.trace_parent{e.more}`

	// unpackEvents claims from packed events, which are all due from
	// their commit: it takes whole rows, oldest first (FOR UPDATE SKIP
	// LOCKED, as a claim), no more than it needs for the events it may
	// claim, writes their events into the unpacked table in the same
	// statement, the first of them claimed and the rest due, and returns
	// the claimed ones.
	unpackEvents = `
WITH locked AS (
    SELECT id, cardinality({counted}) AS events FROM {batches}
    WHERE url = $4 AND created_at <= $1
    ORDER BY id
    LIMIT %[1]d
    FOR UPDATE SKIP LOCKED
), needed AS (
    SELECT id FROM (SELECT id, sum(events) OVER (ORDER BY id) - events AS before FROM locked) AS l
    WHERE before < %[1]d
), packed AS (
    DELETE FROM {batches} WHERE url = $4 AND id IN (SELECT id FROM needed)
    RETURNING *
), unpacked AS (
    SELECT {p.e.id}, p.url, e.plant_id, e.item, p.created_at, e.trace_parent{e.more},
           row_number() OVER (ORDER BY p.id, e.n) <= %[1]d AS claimed
    FROM packed AS p,
         unnest({p.ids}p.plant_ids, p.items, p.trace_parents{p.arrays}) WITH ORDINALITY AS e ({ids}plant_id, item, trace_parent{more}, n)
), written AS (
    INSERT INTO {events} (id, url, plant_id, item, created_at, retry_from, attempts, next_at, claim, trace_parent{more})
    SELECT id, url, plant_id, item, created_at, created_at,
           CASE WHEN claimed THEN 1 ELSE 0 END,
           CASE WHEN claimed THEN $2 ELSE created_at END,
           CASE WHEN claimed THEN $3 END,
           trace_parent{more}
    FROM unpacked
    RETURNING id, url, plant_id, item, created_at, retry_from, claim, trace_parent{more}
)
SELECT id, url, plant_id, item, created_at, retry_from, 0 AS attempts, trace_parent{more} FROM written WHERE claim IS NOT NULL`

	settleEvents = `
WITH s AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[], $4::boolean[], $5::timestamptz[], $6::text[])
        AS s (id, claim, delivered, failed, retry_at, error)
), gone AS (
    DELETE FROM {events} AS e USING s
    WHERE e.id = s.id AND e.claim = s.claim AND s.delivered
)
UPDATE {events} AS e
SET next_at = s.retry_at, claim = NULL, last_error = s.error,
    failed_at = CASE WHEN s.failed THEN now() END
FROM s
WHERE e.id = s.id AND e.claim = s.claim AND NOT s.delivered`
)

// outboxDB returns the pool of the outbox's bookkeeping, opened on first
// use. Its sessions commit without waiting for the disk: a claim or a
// settlement lost in a crash only means that an event is attempted again,
// which at-least-once delivery allows, while the events themselves are
// written with their plants, durably. They also avoid sequential scans: a
// claim's plan is kept, and one made while the outbox was nearly empty would
// otherwise keep scanning the whole table as it grows.
func (s *Store) outboxDB() (*sqlx.DB, error) {
	s.outboxOnce.Do(func() {
		c, err := connector(s.cfg.URL, s.cfg.Pooler, outboxSettings...)
		if err != nil {
			s.outboxErr = err
			return
		}
		s.outbox = sqlx.NewDb(sql.OpenDB(newSessions(c, s.watch, loginBound(s.cfg.URL, s.cfg.QueryTimeout))), "postgres")
		conns := outboxConns + len(s.cfg.Receivers)
		s.outbox.SetMaxOpenConns(conns)
		s.outbox.SetMaxIdleConns(conns)
		s.outbox.SetConnMaxLifetime(s.cfg.ConnMaxLifetime)
	})
	return s.outbox, s.outboxErr
}

// outboxConns and a connection per receiver bound the bookkeeping pool: a
// claim per receiver, one settlement, the metrics' and the operator's
// queries.
const outboxConns = 2

func (s *Store) closeOutbox() error {
	if s.outbox == nil {
		return nil
	}
	return s.outbox.Close()
}

// Receivers are the URLs the store writes events for.
func (s *Store) Receivers() []string { return slices.Clone(s.cfg.Receivers) }

// ClaimDue claims at most limit of url's due events, oldest first, until
// now+lease: from the pair of tables of the store's payload, then, when
// that came short, from the other pair (see others). Within a pair, the
// unpacked ones (retries, and the rest of unpacked rows) that fell due no
// later than url's oldest packed row's commit, then packed ones. A claim
// that comes short leaves later due events to the next, which the
// dispatcher makes as soon as an attempt ends. Events are claimed only as
// the synchronous standby has confirmed them (confirm.go): a claim that
// cannot be confirmed in time claims nothing, its events coming back when
// their lease ends.
func (s *Store) ClaimDue(ctx context.Context, url string, now time.Time, lease time.Duration, limit int) ([]application.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	db, err := s.outboxDB()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	if err := s.confirmed(ctx, s.watch.losses.Load()); err != nil {
		return nil, err
	}
	events, err := s.claimDue(ctx, db, url, now, lease, limit)
	if err != nil {
		return nil, err
	}
	if err := s.confirmed(ctx, s.watch.losses.Load()); err != nil {
		return nil, err
	}
	return events, nil
}

// claimDue is ClaimDue's claim, on db.
func (s *Store) claimDue(ctx context.Context, db *sqlx.DB, url string, now time.Time, lease time.Duration, limit int) ([]application.Event, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	own, other := plantTables, envelopeTables
	if own.payload != s.cfg.Payload {
		own, other = other, own
	}
	events, err := s.claimFrom(ctx, db, own, url, now, lease, limit, token, nil)
	if err != nil || len(events) == limit || !s.others.due(url, now) {
		return events, err
	}
	before := len(events)
	events, err = s.claimFrom(ctx, db, other, url, now, lease, limit, token, events)
	s.others.looked(url, now, len(events) > before)
	return events, err
}

// claimFrom claims from the pair t, as ClaimDue describes, and appends what
// it claimed to events, until they number limit.
func (s *Store) claimFrom(ctx context.Context, db *sqlx.DB, t *outboxTables, url string, now time.Time, lease time.Duration, limit int, token string, events []application.Event) ([]application.Event, error) {
	claim := t.claimTag + token
	events, err := s.claim(ctx, db, t.claimStatement(limit-len(events)), url, now, lease, claim, events)
	if err != nil || len(events) == limit {
		return events, err
	}
	return s.claim(ctx, db, t.unpackStatement(limit-len(events)), url, now, lease, claim, events)
}

// claim runs one claiming statement and appends the events it claimed to
// events. On an error it returns those claimed so far with it: their claims
// are held, so the dispatcher attempts them rather than waiting out the lease.
func (s *Store) claim(ctx context.Context, db *sqlx.DB, query, url string, now time.Time, lease time.Duration, claim string, events []application.Event) ([]application.Event, error) {
	if s.cfg.Pooler.shared() {
		claimed := events
		err := s.outboxTx(ctx, db, "claim events", func(tx *sqlx.Tx) error {
			var err error
			claimed, err = s.claimWith(ctx, unprepared{db: tx, text: query}, url, now, lease, claim, events)
			return err
		})
		if err != nil {
			return events, err // the transaction's claims were rolled back
		}
		return claimed, nil
	}
	stmt, err := s.stmts.get(ctx, db, query)
	if err != nil {
		return events, s.fail("claim events", err)
	}
	return s.claimWith(ctx, stmt, url, now, lease, claim, events)
}

// claimWith runs a claiming statement, as claim describes.
func (s *Store) claimWith(ctx context.Context, stmt statement, url string, now time.Time, lease time.Duration, claim string, events []application.Event) ([]application.Event, error) {
	rows, err := stmt.QueryxContext(ctx, now.UTC(), now.Add(lease).UTC(), claim, url)
	if err != nil {
		return events, s.fail("claim events", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r eventRow
		if err := rows.StructScan(&r); err != nil {
			return events, s.fail("claim events", err)
		}
		e := r.event()
		e.Claim = claim
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return events, s.fail("claim events", err)
	}
	return events, nil
}

// Committed receives a signal after a batch stored events.
func (s *Store) Committed() <-chan struct{} { return s.committed }

// announce signals the dispatcher after a commit that stored events.
func (s *Store) announce(inserted int) {
	if inserted == 0 || len(s.cfg.Receivers) == 0 {
		return
	}
	select {
	case s.committed <- struct{}{}:
	default:
	}
}
