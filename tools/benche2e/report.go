package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report prints the run's conditions and one Markdown table, ready to be
// pasted into the documentation.
func (b *bench) report(w io.Writer) {
	o := b.o
	fmt.Fprintf(w, "\n%s, %d cores; %s; %d rounds of %s after %s of warm-up (%d measured again: disturbed); medians of the rounds; %d plants preloaded\n",
		cpuModel(), runtime.NumCPU(), runtime.Version(), o.rounds, o.duration, o.warmup, b.discarded, max(0, o.preload))
	if len(o.env) > 0 {
		fmt.Fprintf(w, "service settings: %s\n", strings.Join(o.env, " "))
	}
	if slices.ContainsFunc(b.cells, func(c *cell) bool { return c.sc.name == "lag" }) {
		fmt.Fprintf(w, "lag: a window of %s at %d creates/s, then up to %s for the events still on their way\n", o.lagDuration, o.lagRate, o.lagDrain)
	}
	for _, v := range o.variants {
		fmt.Fprintf(w, "variant %s: %s\n", v.label, strings.Join(v.env, " "))
	}
	// The webhook's column, and its receiver's share of the CPU, only
	// when the run measured it.
	hooks := slices.ContainsFunc(b.cells, func(c *cell) bool { return c.sc.hook })
	head, rule, receiver := "", "", ""
	if hooks {
		head, rule, receiver = " webhook |", "---|", " · receiver"
	}
	// The ÷ columns of the peer and the floor, only when the run has
	// their rows.
	var versus []string
	for _, r := range []string{peerRef, floorRef} {
		if slices.ContainsFunc(b.cells, func(c *cell) bool { return c.server == r }) {
			versus = append(versus, r)
		}
	}
	refHead, refRule := "", ""
	for _, r := range versus {
		refHead, refRule = refHead+" ÷ "+r+" |", refRule+"--:|"
	}
	fmt.Fprintf(w, "\n| store | op | load | conns | req/s | rounds (req/s) | p50 | p99 | ratio |%s non-2xx | peak RSS | CPU µs/op: service · postgres · load%s · other | WAL B/op |%s\n", refHead, receiver, head)
	fmt.Fprintf(w, "|---|---|---|--:|--:|---|--:|--:|--:|%s--:|--:|--:|--:|%s\n", refRule, rule)
	for _, c := range b.cells {
		ratio := "1.00 (ref)"
		if ref := b.referenceOf(c); ref == nil {
			ratio = "–"
		} else if !c.ref {
			ratio = fmt.Sprintf("%.2f", pairedRatio(c, ref))
		}
		conns, rss := "–", "–"
		if c.conns > 0 {
			conns = fmt.Sprint(c.conns)
		}
		if c.bin != "" {
			rss = fmt.Sprintf("%.1f MiB", float64(slices.Max(values(c, func(s *sample) float64 { return float64(s.rss) })))/(1<<20))
		}
		rounds := strings.Trim(fmt.Sprintf("%.0f", values(c, (*sample).rate)), "[]")
		failed := 0
		for _, s := range c.samples {
			failed += s.failed
		}
		hook := ""
		if hooks {
			hook = " " + b.webhookColumn(c) + " |"
		}
		refs := ""
		for _, r := range versus {
			refs += " " + b.versus(c, r) + " |"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.0f | %s | %s | %s | %s |%s %d | %s | %s | %s |%s\n",
			c.store.kind, c.sc.name, c.load, conns, median(values(c, (*sample).rate)), rounds,
			ms(c, 0.50), ms(c, 0.99), ratio, refs, failed, rss, cpuColumn(c, hooks), walColumn(c), hook)
	}
}

// cpuModel is the machine's CPU as /proc/cpuinfo names it.
func cpuModel() string {
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if _, v, ok := strings.Cut(string(data), "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.SplitN(v, "\n", 2)[0]), ":"))
		}
	}
	return "unknown CPU"
}

// referenceOf returns the cell c is compared with: the reference of its
// kind of store and of the scenario its ratio is taken against; nil for none.
func (b *bench) referenceOf(c *cell) *cell {
	for _, r := range b.cells {
		if r.ref && r.store.kind == c.store.kind && r.sc.name == c.sc.refName() {
			return r
		}
	}
	return nil
}

// versus is the column of c against the reference server r (the peer or the
// floor): on a service row its paired ratio to r's row of the same store,
// operation and connections; "1.00 (ref)" on r's own rows; "–" elsewhere
// (open loops, and operations r does not serve).
func (b *bench) versus(c *cell, r string) string {
	switch {
	case c.server == r:
		return "1.00 (ref)"
	case c.server != "service":
		return "–"
	}
	for _, p := range b.cells {
		if p.server == r && p.store.kind == c.store.kind && p.sc.name == c.sc.name && p.conns == c.conns {
			return fmt.Sprintf("%.2f", pairedRatio(c, p))
		}
	}
	return "–"
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
	return median(ratios)
}

func values(c *cell, f func(*sample) float64) []float64 {
	vs := make([]float64, len(c.samples))
	for i, s := range c.samples {
		vs[i] = f(s)
	}
	return vs
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	vs = slices.Sorted(slices.Values(vs))
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2
	}
	return vs[len(vs)/2]
}

// ms is the median over rounds of the q-quantile latency, in milliseconds;
// "–" for a cell that measures none (deliver).
func ms(c *cell, q float64) string {
	if c.sc.name == "deliver" {
		return "–"
	}
	return fmt.Sprintf("%.2f ms", median(values(c, func(s *sample) float64 { return float64(s.percentile(q)) }))/1e6)
}

// cpuColumn is the median CPU one operation cost in each part of the
// machine: the service (on the peer's and the floor's rows, that server's
// own), the PostgreSQL server (and PgBouncer, with
// -pgbouncer), the load (this program's HTTP client or loop, or pgbench),
// and everything else running meanwhile, which is noise (PostgreSQL's share
// too when it is not the store measured).
// With receiver it also shows the webhook receiver's, where it is apart from
// the load: in a wrk cell and in deliver, which has no load. In the open
// loops the receiver shares this program with vegeta, and the load's figure
// holds both.
// walColumn is the median of PostgreSQL's WAL bytes per operation over the
// rounds: what each commit waits to flush, which bounds writes on a machine
// of many cores before the CPU does. The whole server's WAL is counted, so a
// reference's row counts what its statement writes.
func walColumn(c *cell) string {
	if c.store.kind != "postgres" {
		return "–"
	}
	return fmt.Sprintf("%.0f", median(values(c, func(s *sample) float64 {
		return float64(s.cpu.wal) / float64(max(1, s.completed))
	})))
}

func cpuColumn(c *cell, receiver bool) string {
	per := func(part func(cpuTimes) time.Duration) string {
		return fmt.Sprintf("%.0f", median(values(c, func(s *sample) float64 {
			return float64(part(s.cpu).Microseconds()) / float64(max(1, s.completed))
		})))
	}
	svc, pg := "–", "–"
	if c.bin != "" {
		svc = per(func(t cpuTimes) time.Duration { return t.service })
	}
	if c.store.kind == "postgres" {
		pg = per(func(t cpuTimes) time.Duration { return t.postgres })
	}
	parts := []string{svc, pg, per(func(t cpuTimes) time.Duration { return t.load })}
	if c.sc.name == "deliver" {
		parts[2] = "–"
	}
	if receiver {
		rc := "–"
		if c.sc.hook && c.rate == 0 {
			rc = per(func(t cpuTimes) time.Duration { return t.receiver })
		}
		parts = append(parts, rc)
	}
	return strings.Join(append(parts, per(func(t cpuTimes) time.Duration { return max(0, t.busy-own(c, t)) })), " · ")
}
