package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// pgbench runs the scenario's script with pgbench's fastest protocol
// (prepared statements), one statement and one commit per transaction, for
// the warm-up and the window, and measures the window from its
// per-transaction log.
func (b *bench) pgbench(ctx context.Context, c *cell) (*sample, error) {
	o, db := b.o, c.store.db
	if c.ids != nil {
		_, err := db.ExecContext(ctx, "CREATE SEQUENCE IF NOT EXISTS bench_delete")
		if err == nil {
			_, err = db.ExecContext(ctx, "SELECT setval('bench_delete', $1, false)", c.ids.next.Load())
		}
		if err != nil {
			return nil, fmt.Errorf("delete sequence: %w", err)
		}
	}
	logDir, err := os.MkdirTemp(b.dir, "pgbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(logDir)
	script := filepath.Join(logDir, c.sc.name+".pgbench")
	if err := os.WriteFile(script, []byte(c.sc.pgbench), 0o644); err != nil {
		return nil, err
	}
	// pgbench takes whole seconds; one more keeps the window inside its run
	// whatever its connections took to open.
	secs := int(math.Ceil((o.warmup + o.duration).Seconds())) + 1
	cmd := exec.CommandContext(ctx, "pgbench", "--no-vacuum", "--protocol=prepared",
		"--client="+strconv.Itoa(c.conns), "--jobs="+strconv.Itoa(min(c.conns, runtime.NumCPU())),
		"--time="+strconv.Itoa(secs), "--file="+script, "--define=rows="+strconv.FormatInt(o.preload, 10),
		"--log", "--log-prefix="+filepath.Join(logDir, "tx"), c.store.url)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	cpu := probeCPU(ctx, c.store, o.warmup, o.duration, -1, cmd.Process.Pid, -1)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("pgbench: %v\n%s", err, out.Bytes())
	}
	s, err := readPgbenchLogs(logDir, o.warmup, o.duration)
	if err == nil && c.ids != nil {
		var last int64
		err = db.QueryRowContext(ctx, "SELECT last_value FROM bench_delete").Scan(&last)
		c.ids.next.Store(last + 1)
	}
	if err != nil {
		return nil, err
	}
	s.cpu = <-cpu
	return s, nil
}

// readPgbenchLogs reads every per-transaction log of a pgbench run. The
// window opens warmup after the first transaction ended.
func readPgbenchLogs(logDir string, warmup, duration time.Duration) (*sample, error) {
	files, _ := filepath.Glob(filepath.Join(logDir, "tx*"))
	if len(files) == 0 {
		return nil, fmt.Errorf("pgbench wrote no transaction log in %s", logDir)
	}
	type tx struct {
		end     time.Time
		latency time.Duration
		failed  bool // "failed" or "skipped" instead of a time
	}
	var txs []tx
	var first time.Time
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(string(data)) {
			// client_id transaction_no time script_no time_epoch time_us ...
			var client, no, script, sec, usec int64
			var took string
			if _, err := fmt.Sscan(line, &client, &no, &took, &script, &sec, &usec); err != nil {
				continue
			}
			us, err := strconv.ParseInt(took, 10, 64)
			t := tx{end: time.Unix(sec, usec*1000), latency: time.Duration(us) * time.Microsecond, failed: err != nil}
			if first.IsZero() || t.end.Before(first) {
				first = t.end
			}
			txs = append(txs, t)
		}
	}
	w := window{start: first.Add(warmup), end: first.Add(warmup + duration)}
	s := &sample{window: duration, latencies: make([]time.Duration, 0, len(txs))}
	for _, t := range txs {
		if w.contains(t.end) {
			s.completed++
			if t.failed {
				s.failed++
			} else {
				s.latencies = append(s.latencies, t.latency)
			}
		}
	}
	return s, nil
}

// loop is the embedded store's reference: the plain Go loop an application
// would write, without group commit, on one connection with the store's DSN:
// a write is BEGIN IMMEDIATE, the prepared statement, COMMIT; a read is the
// prepared query, its rows scanned.
func (b *bench) loop(ctx context.Context, c *cell) (*sample, error) {
	stmt, err := c.store.db.PrepareContext(ctx, c.sc.sql)
	if err != nil {
		return nil, fmt.Errorf("loop: %w", err)
	}
	defer stmt.Close()
	cpu := probeCPU(ctx, c.store, b.o.warmup, b.o.duration, -1, 0, -1)
	s, w := b.newSample(b.o.duration)
	var dest []any // a read's row, as an application scans it
	for began := time.Now(); began.Before(w.end) && ctx.Err() == nil; began = time.Now() {
		err := loopOnce(ctx, c.store.db, stmt, c.sc, c.sc.id(b.o.preload, c.ids), &dest)
		if done := time.Now(); w.contains(done) {
			s.completed++
			s.latencies = append(s.latencies, done.Sub(began))
			if err != nil {
				s.failed++
			}
		}
	}
	s.cpu = <-cpu
	return s, ctx.Err()
}

var errNoRow = errors.New("the write changed no row")

func loopOnce(ctx context.Context, db *sql.DB, stmt *sql.Stmt, sc scenario, id int64, dest *[]any) error {
	if !sc.write {
		rows, err := stmt.QueryContext(ctx, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		if *dest == nil {
			cols, _ := rows.Columns()
			for range cols {
				*dest = append(*dest, new(any))
			}
		}
		for rows.Next() {
			if err := rows.Scan(*dest...); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	res, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, id)
	if err == nil {
		if n, _ := res.RowsAffected(); n != 1 {
			err = errNoRow
		}
	}
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
