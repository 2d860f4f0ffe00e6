package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	_ "github.com/lib/pq" // registers the "postgres" driver
	"github.com/plantstore/plantstore/adapters/sqlite"
)

// store is one of the run's two databases: a PostgreSQL database created for
// the run, or a fresh SQLite file.
type store struct {
	kind  string  // "postgres" or "sqlite"
	url   string  // PLANTSTORE_DATABASE_URL of the service, and pgbench's URL
	path  string  // the SQLite file
	db    *sql.DB // one connection, for loading, checkpoints and sequences
	admin *sql.DB // PostgreSQL's maintenance database, to drop the run's
	name  string  // the PostgreSQL database's name
	// bin is, with -own-schema, the one binary whose cells run on this
	// store; "" for every binary.
	bin string
	// cursors are those of the pages of the preloaded event feed, taken by
	// the first cell of a scenario of the feed (feedCursors).
	cursors []string
}

func openPostgres(ctx context.Context, adminURL string) (*store, error) {
	admin, err := sql.Open("postgres", adminURL)
	if err != nil {
		return nil, err
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	s := &store{kind: "postgres", admin: admin, name: "plantstore_bench_" + hex.EncodeToString(suffix)}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+s.name); err != nil {
		_ = admin.Close()
		return nil, fmt.Errorf("create database: %w", err)
	}
	u, err := url.Parse(adminURL)
	if err == nil {
		u.Path = "/" + s.name
		s.url = u.String()
		s.db, err = sql.Open("postgres", s.url)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	s.db.SetMaxOpenConns(1)
	return s, nil
}

// openSQLite opens a fresh file, named name in dir, with the store's own
// DSN.
func openSQLite(dir, name string) (*store, error) {
	path := filepath.Join(dir, name)
	db, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &store{kind: "sqlite", url: "sqlite:" + path, path: path, db: db}, nil
}

// close closes the store and drops the PostgreSQL database, ending any
// session still on it.
func (s *store) close() {
	if s.db != nil {
		_ = s.db.Close()
	}
	if s.admin == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+s.name+" WITH (FORCE)"); err != nil {
		progress("could not drop database %s: %v", s.name, err)
	}
	_ = s.admin.Close()
}

// checkpoint writes every dirty page (PostgreSQL) or folds the write-ahead
// log into the file and empties it (SQLite), so that every cell starts from
// the same state and pays the same full-page writes.
func (s *store) checkpoint(ctx context.Context) error {
	q := "CHECKPOINT"
	if s.kind == "sqlite" {
		q = "PRAGMA wal_checkpoint(TRUNCATE)"
	}
	_, err := s.db.ExecContext(ctx, q)
	return err
}

// vacuum has PostgreSQL vacuum the plants, so that every cell starts from
// a table without dead rows: the old versions of the previous cell's writes
// (and of renderMissingItems' updates, after an older build's cell) would
// otherwise be rows the cell's writes step over and that autovacuum cleans
// up during its window, a cost of the cells before it.
func (s *store) vacuum(ctx context.Context) error {
	if s.kind != "postgres" {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, "VACUUM ANALYZE plants"); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	return nil
}

// preloadItem is the item the service renders for a preloaded plant, whose
// id stands at the mark: every preloaded plant has the same name and tag,
// so its item is this text around its id.
const preloadItem = `'{"id":' || id || ',"name":"Monstera deliciosa","tag":"indoor"}'`

// load stores plants with the ids [from, to), in id order and in batches of
// a transaction each, then has PostgreSQL vacuum and analyse the table.
// Where plants keep their items, each gets the one the service would have
// written, so that lists aggregate stored items as they do in service.
func (s *store) load(ctx context.Context, from, to int64) error {
	items, err := s.hasColumn(ctx, "plants", "item")
	if err != nil {
		return err
	}
	cols, item := "id, name, tag, created_by, created_at", ""
	if items {
		cols, item = cols+", item", ", "+preloadItem
	}
	q := `INSERT INTO plants (` + cols + `)
SELECT id, 'Monstera deliciosa', 'indoor', 'preload', now()` + item + ` FROM generate_series($1::bigint, $2::bigint) AS id`
	if s.kind == "sqlite" {
		q = `INSERT INTO plants (` + cols + `)
WITH RECURSIVE ids(id) AS (SELECT ? UNION ALL SELECT id + 1 FROM ids WHERE id < ?)
SELECT id, 'Monstera deliciosa', 'indoor', 'preload', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')` + item + ` FROM ids`
	}
	const batch = 200_000
	for lo := from; lo < to; lo += batch {
		if _, err := s.db.ExecContext(ctx, q, lo, min(lo+batch, to)-1); err != nil {
			return fmt.Errorf("load plants into %s: %w", s.kind, err)
		}
	}
	if s.kind == "postgres" {
		if _, err := s.db.ExecContext(ctx, "VACUUM ANALYZE plants"); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
	}
	return nil
}

// walPosition is how far PostgreSQL's WAL has been written, in bytes from
// its start; 0 on the embedded store, or when it cannot be read.
func (s *store) walPosition(ctx context.Context) int64 {
	if s == nil || s.kind != "postgres" {
		return 0
	}
	var pos int64
	if err := s.db.QueryRowContext(ctx, `SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&pos); err != nil {
		return 0
	}
	return pos
}

// hasColumn reports whether table has column: the schema of a build given
// with -bin may predate it.
func (s *store) hasColumn(ctx context.Context, table, column string) (bool, error) {
	q := `SELECT count(*) FROM information_schema.columns WHERE table_name = $1 AND column_name = $2 AND table_schema = current_schema()`
	if s.kind == "sqlite" {
		q = `SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2`
	}
	var n int
	if err := s.db.QueryRowContext(ctx, q, table, column).Scan(&n); err != nil {
		return false, fmt.Errorf("columns of %s in %s: %w", table, s.kind, err)
	}
	return n > 0, nil
}

// renderMissingItems gives every plant without an item the one the service
// renders. Builds of different ages share the store, and an older one's
// writes leave plants without items (it rendered them in the database),
// which a newer build's lists then read one by one: each cell starts with
// every plant as the build measured would have left it.
func (s *store) renderMissingItems(ctx context.Context) error {
	items, err := s.hasColumn(ctx, "plants", "item")
	if err != nil || !items {
		return err
	}
	q := `UPDATE plants SET item = '{"id":' || id || ',"name":' || to_json(name) || coalesce(',"tag":' || to_json(tag), '') || '}' WHERE item IS NULL`
	if s.kind == "sqlite" {
		q = `UPDATE plants SET item = '{"id":' || id || ',"name":' || json_quote(name) || coalesce(',"tag":' || json_quote(tag), '') || '}' WHERE item IS NULL`
	}
	if _, err := s.db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("render the missing items of %s: %w", s.kind, err)
	}
	return nil
}

// feedEvents is how many events loadEvents preloads: pages enough that the
// draws of a window rarely repeat one, few enough to walk in a second.
const feedEvents = 200_000

// loadEvents stores feedEvents events in the event feed, each created with
// a preloaded plant's item, in one transaction: on PostgreSQL one
// transaction id, numbers in order, perRow events a row as one statement's
// events are kept (a build from before that, one a row). A build without the feed has no table
// for it, and nothing is loaded.
func (s *store) loadEvents(ctx context.Context, perRow int) error {
	if ok, err := s.hasColumn(ctx, "plant_events", "number"); err != nil || !ok {
		return err
	}
	// Builds from before the item was kept once, in the line, have a
	// column for it; builds from before the line was all an event kept
	// besides its position and time, columns for its type and plant.
	const numbered = `
FROM (SELECT nextval('plant_events_number_seq') AS number, id, ` + preloadItem + ` AS item
      FROM generate_series(1::bigint, $1::bigint) AS id) AS e`
	q := `INSERT INTO plant_events (number, line)
SELECT e.number, plant_event_line(e.number, 'plant.created', e.item)` + numbered
	itemColumn, err := s.hasColumn(ctx, "plant_events", "item")
	if err != nil {
		return err
	}
	typeColumn, err := s.hasColumn(ctx, "plant_events", "type")
	if err != nil {
		return err
	}
	packed, err := s.hasColumn(ctx, "plant_events", "count")
	if err != nil {
		return err
	}
	args := []any{feedEvents}
	switch {
	case packed:
		// A row keeps the events of one statement, perRow of them.
		q = `INSERT INTO plant_events (number, lines, count)
SELECT max(e.number), string_agg(plant_event_line(e.number, 'plant.created', e.item), E'\n' ORDER BY e.number), count(*)` + numbered + `
GROUP BY (e.id - 1) / $2`
		args = append(args, perRow)
	case itemColumn:
		q = `INSERT INTO plant_events (type, plant_id, item)
SELECT 'plant.created', id, ` + preloadItem + ` FROM generate_series(1::bigint, $1::bigint) AS id`
	case typeColumn:
		q = `INSERT INTO plant_events (number, type, plant_id, line)
SELECT e.number, 'plant.created', e.id, plant_event_line(e.number, 'plant.created', e.item)` + numbered
	}
	if s.kind == "sqlite" {
		q = `INSERT INTO plant_events (type, plant_id, item, created_at)
WITH RECURSIVE ids(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM ids WHERE id < ?)
SELECT 'plant.created', id, ` + preloadItem + `, strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000000Z' FROM ids`
	}
	if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("load events into %s: %w", s.kind, err)
	}
	if s.kind == "postgres" {
		if _, err := s.db.ExecContext(ctx, "VACUUM ANALYZE plant_events"); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
	}
	return nil
}
