package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// pgbenchScript is one create done by PostgreSQL alone: the same row the
// service stores, one statement and one commit per transaction, with
// synchronous_commit as the server has it. The id is drawn from the whole
// positive bigint range, as the HTTP load draws it, so that both write to
// random places in the primary key and practically never collide (a
// collision would only make the reference cheaper).
const pgbenchScript = `\set id random(1, 9223372036854775806)
INSERT INTO plants (id, name, tag, created_by, created_at)
VALUES (:id, 'Monstera deliciosa', 'indoor', 'bench', now())
ON CONFLICT (id) DO NOTHING;
`

// runPgbench runs pgbench with the given number of clients for the warm-up
// and the measured window, with prepared statements (its fastest protocol),
// and measures the window from pgbench's per-transaction log.
func runPgbench(ctx context.Context, dir, databaseURL string, clients int, warmup, duration time.Duration) (*sample, error) {
	script := filepath.Join(dir, "insert.pgbench")
	if err := os.WriteFile(script, []byte(pgbenchScript), 0o644); err != nil {
		return nil, err
	}
	logDir, err := os.MkdirTemp(dir, "pgbench-log-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(logDir)

	// pgbench takes whole seconds; one more keeps the window inside its run
	// whatever its connections took to open.
	secs := int(math.Ceil((warmup + duration).Seconds())) + 1
	cmd := exec.CommandContext(ctx, "pgbench",
		"--no-vacuum", "--protocol=prepared",
		"--client="+strconv.Itoa(clients), "--jobs="+strconv.Itoa(min(clients, 2)),
		"--time="+strconv.Itoa(secs), "--file="+script,
		"--log", "--log-prefix="+filepath.Join(logDir, "tx"),
		databaseURL)
	cmd.Dir = logDir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	cpu := probeCPU(ctx, warmup, duration, 0, cmd.Process.Pid, true)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("pgbench: %v\n%s", err, out.Bytes())
	}
	s, err := readPgbenchLogs(logDir, warmup, duration)
	if err != nil {
		return nil, err
	}
	s.cpu = <-cpu
	return s, nil
}

// readPgbenchLogs reads every per-transaction log of a pgbench run. The
// window opens warmup after the first transaction finished.
func readPgbenchLogs(logDir string, warmup, duration time.Duration) (*sample, error) {
	files, err := filepath.Glob(filepath.Join(logDir, "tx*"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("pgbench wrote no transaction log in %s", logDir)
	}
	type tx struct {
		end     time.Time
		latency time.Duration
		failed  bool
	}
	var txs []tx
	first := time.Time{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// client_id transaction_no time script_no time_epoch time_us ...
			fields := strings.Fields(sc.Text())
			if len(fields) < 6 {
				continue
			}
			sec, err1 := strconv.ParseInt(fields[4], 10, 64)
			usec, err2 := strconv.ParseInt(fields[5], 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			t := tx{end: time.Unix(sec, usec*1000)}
			if us, err := strconv.ParseInt(fields[2], 10, 64); err == nil {
				t.latency = time.Duration(us) * time.Microsecond
			} else {
				t.failed = true // "failed" or "skipped"
			}
			if first.IsZero() || t.end.Before(first) {
				first = t.end
			}
			txs = append(txs, t)
		}
		err = sc.Err()
		_ = f.Close()
		if err != nil {
			return nil, err
		}
	}
	w := window{start: first.Add(warmup), end: first.Add(warmup + duration)}
	s := &sample{window: duration, latencies: make([]time.Duration, 0, len(txs))}
	for _, t := range txs {
		if !w.contains(t.end) {
			continue
		}
		s.completed++
		if t.failed {
			s.failed++
			continue
		}
		s.latencies = append(s.latencies, t.latency)
	}
	return s, nil
}
