package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// machine is what the table's figures depend on besides the code.
type machine struct {
	cpu        string
	cores      int
	memory     string
	kernel     string
	load       string // load averages when the run started
	postgres   string
	pgSettings string
}

func describeMachine(ctx context.Context, pgURL string) machine {
	m := machine{cores: runtime.NumCPU(), cpu: "unknown", memory: "unknown", kernel: "unknown", load: loadAverages()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m.cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(data), "MemTotal: %d kB", &kb); err == nil {
			m.memory = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(data))
	}
	m.postgres, m.pgSettings = describePostgres(ctx, pgURL)
	return m
}

// describePostgres returns the server's version and the settings that decide
// what a commit costs.
func describePostgres(ctx context.Context, pgURL string) (version, settings string) {
	db, err := sql.Open("postgres", pgURL)
	if err != nil {
		return "unknown", ""
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.QueryRowContext(ctx, "SHOW server_version").Scan(&version); err != nil {
		return "unreachable", ""
	}
	var parts []string
	for _, name := range []string{"synchronous_commit", "fsync", "wal_sync_method", "full_page_writes", "commit_delay", "shared_buffers", "max_connections"} {
		var v string
		if err := db.QueryRowContext(ctx, "SHOW "+name).Scan(&v); err == nil {
			parts = append(parts, name+"="+v)
		}
	}
	return version, strings.Join(parts, " ")
}

func loadAverages() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// waitForIdle waits until the 1-minute load average falls below limit: other
// work on the machine would be measured along with the service.
func waitForIdle(ctx context.Context, limit float64, longest time.Duration) error {
	deadline := time.Now().Add(longest)
	for {
		var one float64
		if _, err := fmt.Sscan(loadAverages(), &one); err != nil {
			return fmt.Errorf("read the load average: %w", err)
		}
		if one < limit {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("load average still %.2f after %s (want below %.2f)", one, longest, limit)
		}
		progress("load average %.2f, waiting for it to fall below %.2f", one, limit)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Second):
		}
	}
}
