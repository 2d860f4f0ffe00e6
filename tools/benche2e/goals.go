package main

import (
	"fmt"
	"strings"
)

// goal is a target of docs/performance.md that a run can show as a ratio:
// the service's closed loop on a store against one of its references.
type goal struct {
	store  string // "" for every store
	op     string
	conns  int    // the service's connections the target is set at
	versus string // "reference" (pgbench or the Go loop), peerRef, floorRef, or "service": the service's own cells of another operation
	of     string // the denominator's operation when not op
	// perByte takes the ratio of bytes read per second: the feed's target
	// is list pages of the same size, and a feed page is larger.
	perByte    bool
	min        float64 // the ratio must be at least this
	p99MS      float64 // and the service's p99 at most this; 0: no bound
	p99UnderOf bool    // and its p99 no worse than the denominator's
	clean      bool    // and no non-2xx
}

// goals are in the order of the targets' table, which the chart keeps.
// Targets that are not a ratio of one run (lag, memory, the in-process
// path, the 16-core machine) are in the table alone.
var goals = []goal{
	{store: "postgres", op: "create", conns: 64, versus: "reference", min: 1.2, p99MS: 10, clean: true},
	{store: "postgres", op: "create", conns: 64, versus: floorRef, min: 2, p99UnderOf: true},
	{store: "postgres", op: "create", conns: 64, versus: peerRef, min: 3},
	{store: "sqlite", op: "create", conns: 64, versus: "reference", min: 1},
	{store: "postgres", op: "get", conns: 64, versus: "reference", min: 1, p99MS: 10, clean: true},
	{store: "postgres", op: "get", conns: 64, versus: floorRef, min: 2, p99UnderOf: true},
	{store: "postgres", op: "get", conns: 64, versus: peerRef, min: 3},
	{store: "postgres", op: "get-not-modified", conns: 64, versus: "service", of: "get", min: 1},
	{store: "postgres", op: "list", conns: 16, versus: "reference", min: 1, p99MS: 20},
	{store: "postgres", op: "list", conns: 16, versus: floorRef, min: 1.5, p99MS: 20},
	{store: "postgres", op: "list", conns: 16, versus: peerRef, min: 2.5, p99MS: 20},
	{op: "events", conns: 16, versus: "service", of: "list", perByte: true, min: 1},
	{store: "postgres", op: "change", conns: 64, versus: "reference", min: 1.5, clean: true},
	{store: "postgres", op: "delete", conns: 64, versus: "reference", min: 1.5, clean: true},
	{store: "postgres", op: "delete", conns: 64, versus: floorRef, min: 2, p99UnderOf: true},
	{store: "postgres", op: "delete", conns: 64, versus: peerRef, min: 3},
	{store: "postgres", op: "create+hook", conns: 64, versus: "reference", of: "create", min: 1.2, p99MS: 10},
}

// bar is one service cell against one goal.
type bar struct {
	label string // what is divided by what
	ratio float64
	min   float64
	// ratioMet: the ratio reaches the target; missed: the first of the
	// target's other terms the cell misses ("p99", "non-2xx"); met: all.
	ratioMet, met bool
	missed        string
	detail        string // the target's terms, and how the cell stands on each
}

// bars are the goals the run measured, one per service cell that a goal
// concerns and whose denominator the run has.
func (r results) bars() []bar {
	var bs []bar
	for _, g := range goals {
		for _, c := range r.Cells {
			if c.Server != "service" || c.Rate != 0 || c.Op != g.op || c.Conns != g.conns || g.store != "" && c.Store != g.store {
				continue
			}
			if d := r.denominator(g, c); d != nil {
				if b, ok := g.bar(c, *d); ok {
					bs = append(bs, b)
				}
			}
		}
	}
	return bs
}

// denominator is the cell c's ratio is taken against under g; nil when the
// run did not measure it.
func (r results) denominator(g goal, c cellResult) *cellResult {
	of := g.op
	if g.of != "" {
		of = g.of
	}
	for i, d := range r.Cells {
		if d.Store != c.Store || d.Op != of {
			continue
		}
		switch {
		case g.versus == "reference" && d.Ref,
			g.versus == "service" && d.Server == "service" && d.Load == c.Load && d.Conns == c.Conns && d.Rate == 0,
			(g.versus == peerRef || g.versus == floorRef) && d.Server == g.versus && d.Conns == c.Conns:
			return &r.Cells[i]
		}
	}
	return nil
}

// bar is c against d under g; false when no round pairs (a denominator
// that measured nothing, or no bytes in a file of an older run).
func (g goal) bar(c, d cellResult) (bar, bool) {
	var ratios []float64
	for i := range min(len(c.Rounds), len(d.Rounds)) {
		num, den := c.Rounds[i].PerSecond, d.Rounds[i].PerSecond
		if g.perByte {
			num, den = c.Rounds[i].BytesPerSecond, d.Rounds[i].BytesPerSecond
		}
		if num > 0 && den > 0 {
			ratios = append(ratios, num/den)
		}
	}
	if len(ratios) == 0 {
		return bar{}, false
	}
	p99 := func(c cellResult) float64 {
		vs := make([]float64, len(c.Rounds))
		for i, r := range c.Rounds {
			vs[i] = r.P99MS
		}
		return median(vs)
	}
	failed := 0
	for _, r := range c.Rounds {
		failed += r.Failed
	}
	b := bar{ratio: median(ratios), min: g.min}
	b.ratioMet = b.ratio >= g.min
	terms := []string{fmt.Sprintf("target ≥ %g×", g.min)}
	bound := func(ok bool, name, format string, args ...any) {
		if !ok {
			format = strings.Replace(format, "≤", ">", 1)
			if b.missed == "" {
				b.missed = name
			}
		}
		terms = append(terms, fmt.Sprintf(format, args...))
	}
	if g.p99MS > 0 {
		bound(p99(c) <= g.p99MS, "p99", "p99 %.1f ≤ %g ms", p99(c), g.p99MS)
	}
	if g.p99UnderOf {
		bound(p99(c) <= p99(d), "p99", "p99 %.1f ≤ %.1f ms, the %s's", p99(c), p99(d), g.versus)
	}
	if g.clean {
		bound(failed == 0, "non-2xx", "%d non-2xx", failed)
	}
	b.met = b.ratioMet && b.missed == ""
	b.detail = strings.Join(terms, "; ")

	var of string
	switch {
	case g.versus == "service" && g.perByte:
		of = d.Op + ", bytes/s"
	case g.versus == "service":
		of = d.Op
	case d.Load == "pgbench":
		of = fmt.Sprintf("pgbench -c%d", d.Conns)
	default:
		of = d.Load
	}
	b.label = fmt.Sprintf("%s · %s ÷ %s", c.Store, c.Op, of)
	if variant := strings.TrimPrefix(c.Load, "service"); variant != "" {
		b.label += " (" + strings.TrimSpace(variant) + ")"
	}
	return b, true
}
