package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Targets the table is checked against (docs/performance.md).
const (
	targetRatioPostgres = 1.2
	targetConns         = 64
	targetP99           = 10 * time.Millisecond
	targetRSS           = 64 << 20
	targetRatioSQLite   = 1.0
)

// report prints the machine, the table (Markdown, so that it can be pasted
// into the documentation as it is) and the targets.
func report(w io.Writer, m machine, o options, cells []*cell, discarded int) {
	fmt.Fprintf(w, "\nmachine: %s, %d cores, %s RAM, Linux %s, load average at start %s\n", m.cpu, m.cores, m.memory, m.kernel, m.load)
	if o.measures("postgres") {
		fmt.Fprintf(w, "PostgreSQL %s: %s\n", m.postgres, m.pgSettings)
	}
	fmt.Fprintf(w, "%s; %d rounds of %s measured after %s of warm-up (%d more measured again: disturbed by other work); medians of the rounds; preloaded rows %d\n",
		runtime.Version(), o.rounds, o.duration, o.warmup, discarded, o.preload)
	if len(o.env) > 0 {
		fmt.Fprintf(w, "service settings: %s\n", strings.Join(o.env, " "))
	}
	for _, v := range o.variants {
		settings := strings.Join(v.env, " ")
		if settings == "" {
			settings = "the defaults"
		}
		fmt.Fprintf(w, "variant %s: %s\n", v.label, settings)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| store | load | conns | req/s | rounds (req/s) | p50 | p99 | ratio | non-2xx | peak RSS | CPU µs/op: service · postgres · load · other |")
	fmt.Fprintln(w, "|---|---|--:|--:|---|--:|--:|--:|--:|--:|--:|")
	for _, c := range cells {
		ref := referenceOf(c, cells)
		ratio := "1.00 (ref)"
		if ref != c {
			ratio = fmt.Sprintf("%.2f", pairedRatio(c, ref))
		}
		rss := "–"
		if c.service {
			rss = fmt.Sprintf("%.1f MiB", float64(peak(c))/(1<<20))
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.0f | %s | %s | %s | %s | %d | %s | %s |\n",
			c.store, c.load, c.conns, median(c, (*sample).rate), roundRates(c),
			ms(median(c, func(s *sample) float64 { return float64(s.percentile(0.50)) })),
			ms(median(c, func(s *sample) float64 { return float64(s.percentile(0.99)) })),
			ratio, failures(c), rss, cpuColumn(c))
	}
	fmt.Fprintln(w)
	checkTargets(w, cells)
}

// checkTargets says, for each target, whether this run met it.
func checkTargets(w io.Writer, cells []*cell) {
	for _, c := range cells {
		if !c.service {
			continue
		}
		ref := referenceOf(c, cells)
		switch {
		case c.store == "postgres" && c.conns == targetConns && ref != nil:
			r := pairedRatio(c, ref)
			p99 := time.Duration(median(c, func(s *sample) float64 { return float64(s.percentile(0.99)) }))
			verdict(w, r >= targetRatioPostgres, "PostgreSQL, %s, %d connections: %.2f× pgbench -c%d (target ≥ %.1f×)", c.load, c.conns, r, ref.conns, targetRatioPostgres)
			verdict(w, p99 <= targetP99, "PostgreSQL, %s, %d connections: p99 %s (target ≤ %s)", c.load, c.conns, ms(float64(p99)), targetP99)
			verdict(w, failures(c) == 0, "PostgreSQL, %s, %d connections: %d non-2xx (target 0)", c.load, c.conns, failures(c))
			verdict(w, peak(c) <= targetRSS, "PostgreSQL, %s, %d connections: peak RSS %.1f MiB (target ≤ %d MiB)", c.load, c.conns, float64(peak(c))/(1<<20), targetRSS>>20)
		case c.store == "sqlite" && ref != nil:
			r := pairedRatio(c, ref)
			verdict(w, r >= targetRatioSQLite, "embedded store, %s, %d connections: %.2f× the plain loop (target ≥ %.1f×)", c.load, c.conns, r, targetRatioSQLite)
			verdict(w, failures(c) == 0, "embedded store, %s, %d connections: %d non-2xx (target 0)", c.load, c.conns, failures(c))
		}
	}
}

func verdict(w io.Writer, ok bool, format string, args ...any) {
	mark := "met    "
	if !ok {
		mark = "MISSED "
	}
	fmt.Fprintf(w, "%s %s\n", mark, fmt.Sprintf(format, args...))
}

// referenceOf returns the cell c is compared with: its store's reference.
func referenceOf(c *cell, cells []*cell) *cell {
	for _, r := range cells {
		if r.store == c.store && r.reference {
			return r
		}
	}
	return nil
}

// pairedRatio is the median over rounds of c's rate divided by ref's rate in
// the same round: interleaving makes each round a fair pair.
func pairedRatio(c, ref *cell) float64 {
	var ratios []float64
	for i := range min(len(c.samples), len(ref.samples)) {
		if r := ref.samples[i].rate(); r > 0 {
			ratios = append(ratios, c.samples[i].rate()/r)
		}
	}
	return medianOf(ratios)
}

func median(c *cell, f func(*sample) float64) float64 {
	vs := make([]float64, len(c.samples))
	for i, s := range c.samples {
		vs[i] = f(s)
	}
	return medianOf(vs)
}

func medianOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2
	}
	return vs[len(vs)/2]
}

func roundRates(c *cell) string {
	parts := make([]string, len(c.samples))
	for i, s := range c.samples {
		parts[i] = fmt.Sprintf("%.0f", s.rate())
	}
	return strings.Join(parts, " ")
}

func failures(c *cell) int {
	n := 0
	for _, s := range c.samples {
		n += s.failed
	}
	return n
}

func peak(c *cell) int64 {
	var p int64
	for _, s := range c.samples {
		p = max(p, s.rss)
	}
	return p
}

func ms(ns float64) string {
	return fmt.Sprintf("%.2f ms", ns/1e6)
}

// cpuColumn is the median CPU one operation cost in each part of the
// machine: the service, the PostgreSQL server, the load (this program's
// HTTP client or loop, or pgbench), and everything else running meanwhile,
// which is noise (PostgreSQL's share too when it is not the store measured).
func cpuColumn(c *cell) string {
	per := func(part func(cpuTimes) time.Duration) string {
		return fmt.Sprintf("%.0f", median(c, func(s *sample) float64 {
			if s.completed == 0 {
				return 0
			}
			return float64(part(s.cpu).Microseconds()) / float64(s.completed)
		}))
	}
	pg := "–"
	if c.store == "postgres" {
		pg = per(func(t cpuTimes) time.Duration { return t.postgres })
	}
	svc := "–"
	if c.service {
		svc = per(func(t cpuTimes) time.Duration { return t.service })
	}
	return strings.Join([]string{
		svc, pg,
		per(func(t cpuTimes) time.Duration { return t.client }),
		per(func(t cpuTimes) time.Duration { return max(0, t.busy-t.service-t.postgres-t.client) }),
	}, " · ")
}
