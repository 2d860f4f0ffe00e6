package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPgbenchLogsAreReadInsideTheWindowOnly(t *testing.T) {
	dir := t.TempDir()
	// client_id transaction_no time script_no time_epoch time_us: the first
	// transaction ends at 100.000000; the window is 101 to 103. pgbench
	// writes a time of 0 for some quick transactions: that is no failure.
	logs := map[string]string{
		"tx.1":   "0 0 500 0 100 0\n0 1 900 0 100 999999\n0 2 1000 0 101 0\n0 3 3000 0 102 500000\n",
		"tx.1.1": "1 0 2000 0 101 200000\n1 1 failed 0 102 0\n1 2 0 0 102 1\n1 3 700 0 103 0\n",
	}
	for name, text := range logs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := readPgbenchLogs(dir, time.Second, 2*time.Second)
	if err != nil {
		t.Fatalf("readPgbenchLogs: %v", err)
	}
	if s.completed != 5 || s.failed != 1 {
		t.Errorf("completed %d, failed %d; want 5 in the window, 1 of them failed", s.completed, s.failed)
	}
	if got := s.rate(); got != 2.5 {
		t.Errorf("rate = %v, want 2.5 per second", got)
	}
	if got := s.percentile(0.5); got != time.Millisecond {
		t.Errorf("p50 = %v, want 1ms (of 0, 1ms, 2ms, 3ms)", got)
	}
}
