package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"time"

	_ "github.com/lib/pq" // registers the "postgres" driver
)

// pgDatabase is the run's own database, created fresh and dropped after.
type pgDatabase struct {
	admin *sql.DB // on the server's maintenance database
	db    *sql.DB // on the run's database
	name  string
	url   string // the run's database, for the service and pgbench
}

// createDatabase creates a randomly named database on the server adminURL
// points at.
func createDatabase(ctx context.Context, adminURL string) (*pgDatabase, error) {
	admin, err := sql.Open("postgres", adminURL)
	if err != nil {
		return nil, err
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	name := "plantstore_bench_" + hex.EncodeToString(suffix)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close()
		return nil, fmt.Errorf("create database: %w", err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		_ = admin.Close()
		return nil, err
	}
	u.Path = "/" + name
	d := &pgDatabase{admin: admin, name: name, url: u.String()}
	if d.db, err = sql.Open("postgres", d.url); err != nil {
		_ = d.drop()
		return nil, err
	}
	d.db.SetMaxOpenConns(1)
	return d, nil
}

// drop drops the database, ending any session still on it.
func (d *pgDatabase) drop() error {
	if d.db != nil {
		_ = d.db.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := d.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+d.name+" WITH (FORCE)")
	_ = d.admin.Close()
	return err
}

// checkpoint flushes dirty pages so that every cell starts from the same
// state: right after a checkpoint, paying the same full-page writes.
func (d *pgDatabase) checkpoint(ctx context.Context) error {
	_, err := d.db.ExecContext(ctx, "CHECKPOINT")
	return err
}

// rows counts the plants stored.
func (d *pgDatabase) rows(ctx context.Context) (int64, error) {
	var n int64
	err := d.db.QueryRowContext(ctx, "SELECT count(*) FROM plants").Scan(&n)
	return n, err
}

// preload inserts n plants with random ids, as the load does, in id order
// so that the index is built by appending rather than by page splits all
// over it; then it vacuums and analyses the table.
func (d *pgDatabase) preload(ctx context.Context, n int) error {
	_, err := d.db.ExecContext(ctx, `
INSERT INTO plants (id, name, tag, created_by, created_at)
SELECT id, 'Preloaded plant', NULL, 'preload', now()
FROM (SELECT (random() * 9.2e18)::bigint AS id FROM generate_series(1, $1)) AS ids
ORDER BY id
ON CONFLICT (id) DO NOTHING`, n)
	if err != nil {
		return fmt.Errorf("preload: %w", err)
	}
	if _, err := d.db.ExecContext(ctx, "VACUUM ANALYZE plants"); err != nil {
		return fmt.Errorf("preload: %w", err)
	}
	return nil
}
