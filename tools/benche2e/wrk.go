package main

import (
	"bytes"
	"context"
	"encoding/json"
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

// wrkLoad is the closed loop of a cell: wrk keeps c.conns connections busy,
// one request at a time each. wrk (C, epoll) spends about a third of the CPU
// per request of Go's net/http client, which on a small machine shares the
// cores with the service and the database (docs/performance.md). It runs
// twice: once for the warm-up, which is not counted, then for the window.
func (b *bench) wrkLoad(ctx context.Context, base string, c *cell, servicePID int) (*sample, error) {
	script := filepath.Join(b.dir, c.sc.name+".lua")
	var cursors []string
	if c.sc.feed {
		cursors = c.store.cursors
	}
	if err := os.WriteFile(script, []byte(wrkScript(c.sc, b.token, cursors)), 0o644); err != nil {
		return nil, err
	}
	args := func(d time.Duration) []string {
		first := int64(0)
		if c.ids != nil {
			first = c.ids.next.Load()
		}
		threads := strconv.Itoa(min(c.conns, runtime.NumCPU()))
		return []string{"-t", threads, "-c", strconv.Itoa(c.conns),
			"-d", strconv.Itoa(max(1, int(math.Round(d.Seconds())))) + "s", "--timeout", "30s", "-s", script, base,
			"--", strconv.FormatInt(b.o.preload, 10), strconv.FormatInt(first, 10), threads}
	}
	if b.o.warmup > 0 {
		if _, err := b.runWrk(ctx, c, args(b.o.warmup), servicePID); err != nil {
			return nil, err
		}
	}
	return b.runWrk(ctx, c, args(b.o.duration), servicePID)
}

// wrkResult is the line the script's done() prints; times in µs.
type wrkResult struct {
	Requests   int64 `json:"requests"`
	DurationUS int64 `json:"duration_us"`
	Non2xx     int   `json:"non2xx"`
	Errors     int   `json:"errors"`
	P50US      int64 `json:"p50_us"`
	P99US      int64 `json:"p99_us"`
	MaxUS      int64 `json:"max_us"`
	Taken      int64 `json:"taken"`
	Bytes      int64 `json:"bytes"`
}

// runWrk runs wrk once and reads its result; the CPU of the service, of
// wrk and of the webhook's receiver (this process) is read over the run.
func (b *bench) runWrk(ctx context.Context, c *cell, args []string, servicePID int) (*sample, error) {
	cmd := exec.CommandContext(ctx, "wrk", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("wrk: %w (install it: apt-get install wrk)", err)
	}
	receiverPID := -1
	if c.sc.hook {
		receiverPID = 0
	}
	cpu := probeCPU(ctx, c.store, 0, b.o.duration, servicePID, cmd.Process.Pid, receiverPID)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("wrk: %v\n%s", err, out.Bytes())
	}
	var r wrkResult
	last := strings.TrimSpace(out.String())
	last = last[strings.LastIndexByte(last, '\n')+1:]
	if err := json.Unmarshal([]byte(last), &r); err != nil {
		return nil, fmt.Errorf("wrk printed no result: %v\n%s", err, out.Bytes())
	}
	if c.ids != nil {
		c.ids.next.Add(r.Taken)
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return &sample{
		completed: int(r.Requests),
		failed:    r.Non2xx + r.Errors,
		window:    us(r.DurationUS),
		quantiles: map[float64]time.Duration{0.5: us(r.P50US), 0.99: us(r.P99US), 1: us(r.MaxUS)},
		cpu:       <-cpu,
		began:     began,
		bytes:     r.Bytes,
	}, nil
}

// wrkScript is the Lua of a scenario: its requests, and a done() that prints
// one JSON line. Each thread of wrk draws its own ids; a scenario that
// consumes ids gives thread k of n the ids first+k, first+k+n, ..., so that
// together they take each id once and at most n times the most any thread
// took. A scenario of the feed draws from cursors.
func wrkScript(sc scenario, token string, cursors []string) string {
	table := ""
	if sc.feed {
		table = `cursors = {"` + strings.Join(cursors, `", "`) + `"}
`
	}
	return table + `wrk.headers["Authorization"] = "Bearer ` + token + `"
wrk.headers["Content-Type"] = "application/json"
local threads = {}
function setup(thread)
  thread:set("index", #threads)
  table.insert(threads, thread)
end
function init(args)
  rows, first, step, taken = tonumber(args[1]), tonumber(args[2]), tonumber(args[3]), 0
  math.randomseed(os.time() * 1000 + index)
end
local function take()
  local id = first + index + taken * step
  taken = taken + 1
  return string.format("%.0f", id)
end
function request()
` + sc.lua + `
end
function done(summary, latency)
  local most = 0
  for _, t in ipairs(threads) do most = math.max(most, t:get("taken")) end
  local e = summary.errors
  io.write(string.format('{"requests":%d,"duration_us":%d,"non2xx":%d,"errors":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"taken":%.0f,"bytes":%.0f}\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max, most * #threads, summary.bytes))
end
`
}
