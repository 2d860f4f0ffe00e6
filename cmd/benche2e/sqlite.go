package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// sqliteDSN opens path with the durability settings of the embedded store
// (adapters/sqlite/dsn.go): WAL, synchronous=FULL, and BEGIN IMMEDIATE. The
// reference must pay for the same fsyncs as the store it is compared with;
// keep the two in step.
func sqliteDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// sqliteCreatedAt is the embedded store's time layout.
const sqliteCreatedAt = "2006-01-02T15:04:05.000000000Z"

// runSQLiteLoop is the embedded store's reference: the plain Go loop an
// application would write without group commit, one prepared INSERT and one
// commit per row, on one connection, for warmup plus duration.
func runSQLiteLoop(ctx context.Context, path string, warmup, duration time.Duration) (*sample, error) {
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	insert, err := db.PrepareContext(ctx, `INSERT INTO plants (id, name, tag, created_by, created_at)
VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
	if err != nil {
		return nil, fmt.Errorf("sqlite loop: %w", err)
	}
	defer insert.Close()

	start := time.Now()
	w := window{start: start.Add(warmup), end: start.Add(warmup + duration)}
	s := &sample{window: duration, latencies: make([]time.Duration, 0, 1<<16)}
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for {
		began := time.Now()
		if !began.Before(w.end) || ctx.Err() != nil {
			break
		}
		err := insertOneRow(ctx, db, insert, rng.Int64N(1<<63-1)+1, began)
		done := time.Now()
		if !w.contains(done) {
			continue
		}
		s.completed++
		if err != nil {
			s.failed++
			continue
		}
		s.latencies = append(s.latencies, done.Sub(began))
	}
	return s, ctx.Err()
}

func insertOneRow(ctx context.Context, db *sql.DB, insert *sql.Stmt, id int64, now time.Time) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.StmtContext(ctx, insert).ExecContext(ctx, id, "Monstera deliciosa", "indoor", "bench",
		now.UTC().Format(sqliteCreatedAt)); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// preloadSQLite inserts n plants with random ids in id order, in one
// transaction.
func preloadSQLite(ctx context.Context, path string, n int) error {
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `
INSERT OR IGNORE INTO plants (id, name, tag, created_by, created_at)
WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?)
SELECT abs(random() % 9223372036854775807) + 1 AS id, 'Preloaded plant', NULL, 'preload', ?
FROM seq ORDER BY id`, n, time.Now().UTC().Format(sqliteCreatedAt))
	if err != nil {
		return fmt.Errorf("preload: %w", err)
	}
	return nil
}

// checkpointSQLite folds the write-ahead log back into the database file and
// truncates it, so that every cell starts with an empty log.
func checkpointSQLite(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}
