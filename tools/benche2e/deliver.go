package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// deliverStall ends a delivery cell whose receiver got nothing for this
// long: the missing events count as failed.
const deliverStall = 10 * time.Second

// deliver measures the highest sustained delivery rate of one replica:
// settle filled the outbox with -deliver-events due events, addressed to
// the receiver, while no service ran; the service, started with the
// receiver configured, delivers them with nothing else to do. The window
// opens once a fifth of the events have arrived, so that the service's
// start and its first claims are not counted whatever the rate, and closes
// at the last event's arrival; the rate is the events first received
// inside it per second.
func (b *bench) deliver(ctx context.Context, c *cell, svc *service) (*sample, error) {
	pid, n := svc.cmd.Process.Pid, b.o.deliverEvents
	var (
		began  time.Time
		start  cpuTimes
		before int // events received when the window opened
	)
	for seen, moved := 0, time.Now(); ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		got, _ := b.rc.count()
		if began.IsZero() && got >= n/5 {
			if got >= n {
				return nil, fmt.Errorf("all %d events were delivered before the window opened: raise -deliver-events", n)
			}
			began, start, before = time.Now(), readCPU(pid, -1, 0), got
		}
		if got >= n || (got == seen && time.Since(moved) > deliverStall) {
			break
		}
		if got != seen {
			seen, moved = got, time.Now()
		}
	}
	got, latest := b.rc.count()
	if began.IsZero() {
		return nil, fmt.Errorf("the receiver got %d of %d events, then nothing for %s", got, n, deliverStall)
	}
	return &sample{completed: got - before, failed: n - got, delivered: got - before,
		window: max(time.Millisecond, latest.Sub(began)), began: began, cpu: readCPU(pid, -1, 0).sub(start)}, ctx.Err()
}

// sqliteTime is how the embedded store writes a time: UTC, fixed width, so
// that text order is time order (createdAtLayout in adapters/sqlite).
const sqliteTime = "2006-01-02T15:04:05.000000000Z"

// fillOutboxSQL stores the due events msg_1 … msg_n about plants 1 … n for
// the receiver at url, in one statement, with each store's own time: now()
// as timestamptz on PostgreSQL, the time passed as text on the embedded
// store. The plants need not exist: the outbox keeps its own copy of them.
// PostgreSQL's service writes new events packed, one row per committed
// batch; packedOutboxSQL writes them so, 32 to a row (a batch of creates
// under load), where the schema has packed rows.
// Where events keep their plant's item, instead of its name and tag, the
// statements are the second of each pair: the item is what the service
// renders for the plant, whose id stands at the mark.
var fillOutboxSQL = map[string][2]string{
	"postgres": {`INSERT INTO webhook_events (id, url, plant_id, name, tag, created_at, retry_from, next_at)
SELECT 'msg_' || n, $1, n, 'Monstera deliciosa', 'indoor', now(), now(), now()
FROM generate_series(1, $2::bigint) AS n`, `INSERT INTO webhook_events (id, url, plant_id, item, created_at, retry_from, next_at)
SELECT 'msg_' || n, $1, n, ` + eventItem + `, now(), now(), now()
FROM generate_series(1, $2::bigint) AS n`},
	"sqlite": {`INSERT INTO webhook_events (id, url, plant_id, name, tag, created_at, retry_from, next_at)
WITH RECURSIVE ids(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM ids WHERE n < ?2)
SELECT 'msg_' || n, ?1, n, 'Monstera deliciosa', 'indoor', ?3, ?3, ?3 FROM ids`, `INSERT INTO webhook_events (id, url, plant_id, item, created_at, retry_from, next_at)
WITH RECURSIVE ids(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM ids WHERE n < ?2)
SELECT 'msg_' || n, ?1, n, ` + eventItem + `, ?3, ?3, ?3 FROM ids`},
}

var packedOutboxSQL = [2]string{`INSERT INTO webhook_event_batches (url, created_at, event_ids, plant_ids, names, tags)
SELECT $1, now(), array_agg('msg_' || n ORDER BY n), array_agg(n ORDER BY n),
       array_agg('Monstera deliciosa'::text), array_agg('indoor'::text)
FROM generate_series(1, $2::bigint) AS n
GROUP BY (n - 1) / 32
ORDER BY min(n)`, `INSERT INTO webhook_event_batches (url, created_at, event_ids, plant_ids, items)
SELECT $1, now(), array_agg('msg_' || n ORDER BY n), array_agg(n ORDER BY n), array_agg(` + eventItem + ` ORDER BY n)
FROM generate_series(1, $2::bigint) AS n
GROUP BY (n - 1) / 32
ORDER BY min(n)`}

// eventItem is an event's item, as preloadItem is a plant's.
const eventItem = `'{"id":' || n || ',"name":"Monstera deliciosa","tag":"indoor"}'`

// packed reports whether the PostgreSQL schema has packed outbox rows: a
// build given with -bin may predate them.
func (s *store) packed(ctx context.Context) (bool, error) {
	var ok bool
	err := s.db.QueryRowContext(ctx, "SELECT to_regclass('webhook_event_batches') IS NOT NULL").Scan(&ok)
	return ok, err
}

// fillOutbox stores n due events for url, then has PostgreSQL vacuum and
// analyse the tables, as after the plants' preload.
func (s *store) fillOutbox(ctx context.Context, url string, n int) error {
	items, err := s.hasColumn(ctx, "webhook_events", "item")
	if err != nil {
		return err
	}
	form := 0
	if items {
		form = 1
	}
	q, args := fillOutboxSQL[s.kind][form], []any{url, n}
	if s.kind == "sqlite" {
		args = append(args, time.Now().UTC().Format(sqliteTime))
	}
	if s.kind == "postgres" {
		packed, err := s.packed(ctx)
		if err != nil {
			return fmt.Errorf("fill the outbox of %s: %w", s.kind, err)
		}
		if packed {
			q = packedOutboxSQL[form]
		}
	}
	if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("fill the outbox of %s: %w", s.kind, err)
	}
	if s.kind == "postgres" {
		if _, err := s.db.ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
	}
	return nil
}

// clearOutbox removes every event, of either payload, those a previous cell
// left undelivered included, so that no cell delivers another's. TRUNCATE
// leaves PostgreSQL no dead rows to vacuum during the next window.
func (s *store) clearOutbox(ctx context.Context) error {
	tables := []string{"webhook_events"}
	for _, t := range []string{"webhook_event_batches", "webhook_envelopes", "webhook_envelope_batches"} {
		ok, err := s.hasTable(ctx, t) // a build given with -bin may predate it
		if err != nil {
			return fmt.Errorf("clear the outbox of %s: %w", s.kind, err)
		}
		if ok {
			tables = append(tables, t)
		}
	}
	qs := []string{"TRUNCATE " + strings.Join(tables, ", ")}
	if s.kind != "postgres" {
		qs = qs[:0]
		for _, t := range tables {
			qs = append(qs, "DELETE FROM "+t)
		}
	}
	for _, q := range qs {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("clear the outbox of %s: %w", s.kind, err)
		}
	}
	return nil
}

// hasTable reports whether the store's schema has the table.
func (s *store) hasTable(ctx context.Context, table string) (bool, error) {
	q := "SELECT to_regclass($1) IS NOT NULL"
	if s.kind != "postgres" {
		q = "SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table' AND name = ?"
	}
	var ok bool
	err := s.db.QueryRowContext(ctx, q, table).Scan(&ok)
	return ok, err
}
