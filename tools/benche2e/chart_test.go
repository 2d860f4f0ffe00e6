package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// round is one round's rate, p99 and non-2xx of a saved cell.
func round(perSecond, p99 float64, failed int) roundResult {
	return roundResult{PerSecond: perSecond, P99MS: p99, Failed: failed}
}

// chartRun is a saved run of cells that every kind of goal concerns.
func chartRun() results {
	pg := func(op, load, server string, conns int, ref bool, rounds ...roundResult) cellResult {
		return cellResult{Store: "postgres", Op: op, Load: load, Server: server, Conns: conns, Ref: ref, Rounds: rounds}
	}
	events := pg("events", "service", "service", 16, false, round(600, 5, 0), round(500, 5, 0))
	list := pg("list", "service", "service", 16, false, round(1000, 4, 0), round(1000, 4, 0))
	// Pages of events are 3× a list page's bytes: 1.8× and 1.5× per byte.
	for i := range events.Rounds {
		events.Rounds[i].BytesPerSecond = 3 * events.Rounds[i].PerSecond
		list.Rounds[i].BytesPerSecond = list.Rounds[i].PerSecond
	}
	return results{
		Date: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Command: "benche2e -rounds 2 -refs pgbench,floor",
		Machine: "AMD EPYC, 2 cores", Go: "go1.26.8", Rounds: 2, Duration: "8s", Preload: 1000,
		Cells: []cellResult{
			pg("create", "pgbench", "", 16, true, round(1000, 2, 0), round(1000, 2, 0)),
			pg("create", "floor", floorRef, 64, false, round(500, 9, 0), round(500, 9, 0)),
			// Per round 1.5 and 1.3 over pgbench: 1.4, met; 3 and 2.6 the floor's.
			pg("create", "service", "service", 64, false, round(1500, 4, 0), round(1300, 4, 0)),
			// An open loop and another concurrency are not what the targets name.
			{Store: "postgres", Op: "create", Load: "service open 500/s", Server: "service", Rate: 500, Rounds: []roundResult{round(500, 1, 0)}},
			pg("create", "service", "service", 16, false, round(900, 1, 0)),
			pg("get", "pgbench", "", 16, true, round(1000, 1, 0), round(1000, 1, 0)),
			// Fast enough, but a non-2xx: not met.
			pg("get", "service", "service", 64, false, round(1200, 3, 1), round(1200, 3, 0)),
			pg("get-not-modified", "service", "service", 64, false, round(1300, 3, 0), round(1300, 3, 0)),
			pg("list", "pgbench", "", 16, true, round(3000, 1, 0), round(3000, 1, 0)),
			list, events,
			// No reference measured: no bar.
			pg("delete", "service", "service", 64, false, round(2000, 3, 0)),
			{Store: "sqlite", Op: "create", Load: "Go loop", Conns: 1, Ref: true, Rounds: []roundResult{round(1000, 1, 0), round(1000, 1, 0)}},
			{Store: "sqlite", Op: "create", Load: "service", Server: "service", Conns: 64, Rounds: []roundResult{round(900, 30, 0), round(800, 30, 0)}},
		},
	}
}

// A bar per service cell that a goal concerns, against the denominator that
// goal names, paired by round; met only when every term of the target is.
func TestBarsOfARun(t *testing.T) {
	type row struct {
		label string
		ratio float64
		met   bool
	}
	var got []row
	for _, b := range chartRun().bars() {
		got = append(got, row{b.label, b.ratio, b.met})
	}
	want := []row{
		{"postgres · create ÷ pgbench -c16", 1.4, true},
		{"postgres · create ÷ floor", 2.8, true},
		{"sqlite · create ÷ Go loop", 0.85, false},
		{"postgres · get ÷ pgbench -c16", 1.2, false},
		{"postgres · get-not-modified ÷ get", 1300.0 / 1200, true},
		{"postgres · list ÷ pgbench -c16", 1.0 / 3, false},
		{"postgres · events ÷ list, bytes/s", 1.65, true},
	}
	if len(got) != len(want) {
		t.Fatalf("bars %v, want %v", got, want)
	}
	for i, w := range want {
		if g := got[i]; g.label != w.label || g.met != w.met || g.ratio < w.ratio-1e-9 || g.ratio > w.ratio+1e-9 {
			t.Errorf("bar %d: %+v, want %+v", i, g, w)
		}
	}
	if d := chartRun().bars()[3].detail; !strings.Contains(d, "1 non-2xx") || !strings.Contains(d, "p99 3.0 ≤ 10 ms") {
		t.Errorf("get's terms %q: want its non-2xx and its p99 within the bound", d)
	}
}

// The chart is one SVG document: a bar and a target mark for each goal, and
// each verdict in words, so that it reads without colour.
func TestChartDrawsABarAndATargetPerGoal(t *testing.T) {
	r := chartRun()
	var buf bytes.Buffer
	if err := r.chart(&buf); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var texts []string
	dec := xml.NewDecoder(&buf)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			counts[tok.Name.Local]++
			for _, a := range tok.Attr {
				if a.Name.Local == "class" {
					counts[a.Value]++
				}
			}
		case xml.CharData:
			texts = append(texts, string(tok))
		}
	}
	bars := r.bars()
	drawn := counts["bar met"] + counts["bar missed"] + counts["bar unmet"]
	if counts["svg"] != 1 || drawn != len(bars) || counts["target"] != len(bars) {
		t.Errorf("%d svg, %d bars, %d target marks; want 1 and %d each", counts["svg"], drawn, counts["target"], len(bars))
	}
	// get is fast enough but had a non-2xx; sqlite's creates and lists are short.
	if counts["bar met"] != 4 || counts["bar missed"] != 1 || counts["bar unmet"] != 2 {
		t.Errorf("%d met, %d missed a bound, %d short; want 4, 1 and 2", counts["bar met"], counts["bar missed"], counts["bar unmet"])
	}
	for _, text := range []string{"met", "not met", "not met: non-2xx", "1.40×"} {
		if !slices.Contains(texts, text) {
			t.Errorf("no text %q in %q", text, texts)
		}
	}
}

// A run that measured no goal still draws a chart, which says so.
func TestChartOfNoGoal(t *testing.T) {
	var buf bytes.Buffer
	r := results{Rounds: 1, Cells: []cellResult{{Store: "postgres", Op: "lag", Load: "service open 2000/s", Server: "service", Rate: 2000}}}
	if err := r.chart(&buf); err != nil || !strings.Contains(buf.String(), "No cell of this run measures a target") {
		t.Errorf("%v\n%s", err, buf.String())
	}
	if err := xml.Unmarshal(buf.Bytes(), new(struct{})); err != nil {
		t.Errorf("not well-formed XML: %v", err)
	}
}

// The cells a run saves draw the same chart again.
func TestSavedCellsDrawTheChartAgain(t *testing.T) {
	dir := t.TempDir()
	r := chartRun()
	saved, chart := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.svg")
	if err := r.save(saved); err != nil {
		t.Fatal(err)
	}
	if err := redraw(saved, chart); err != nil {
		t.Fatal(err)
	}
	again, err := loadResults(saved)
	if err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	_ = r.chart(&want)
	_ = again.chart(&got)
	if want.String() != got.String() {
		t.Errorf("the saved cells draw another chart")
	}
	if jsonBeside("/x/performance.svg") != "/x/performance.json" {
		t.Errorf("jsonBeside: %s", jsonBeside("/x/performance.svg"))
	}
}

// A run's results hold each cell's rounds as measured, bytes included.
func TestResultsOfARun(t *testing.T) {
	pg := &store{kind: "postgres"}
	ref := rated(&cell{store: pg, sc: scenarioNamed("list"), load: "pgbench", conns: 16, ref: true}, 0, 3000, 2000)
	svc := rated(&cell{store: pg, sc: scenarioNamed("events"), load: "service", conns: 16, server: "service", bin: "plantstore"}, 0, 500)
	svc.samples[0].bytes, svc.samples[0].rss = 1_000_000, 40<<20
	svc.samples[0].quantiles = map[float64]time.Duration{0.99: 5 * time.Millisecond}
	b := &bench{o: options{rounds: 2, duration: time.Second, preload: 100}, cells: []*cell{ref, svc}}
	r := b.results([]string{"-ops", "events"})
	if r.Command != "benche2e -ops events" || len(r.Cells) != 2 || r.Rounds != 2 || r.Preload != 100 {
		t.Fatalf("results %+v", r)
	}
	if c := r.Cells[0]; !c.Ref || c.Load != "pgbench" || len(c.Rounds) != 2 || c.Rounds[1].PerSecond != 2000 {
		t.Errorf("reference %+v", c)
	}
	if c := r.Cells[1]; c.Server != "service" || c.PeakRSSMiB != 40 || c.Rounds[0] != (roundResult{PerSecond: 500, BytesPerSecond: 1_000_000, P99MS: 5}) {
		t.Errorf("service %+v", c)
	}
}

// A run draws its chart into the documentation unless told otherwise, and
// drawing again needs somewhere to draw.
func TestChartFlags(t *testing.T) {
	if o, err := parseOptions(nil); err != nil || o.chart != "docs/performance.svg" || o.chartFrom != "" {
		t.Errorf("defaults: %v, chart %q from %q", err, o.chart, o.chartFrom)
	}
	if o, err := parseOptions(strings.Fields("-chart-from docs/performance.json -chart /tmp/c.svg")); err != nil || o.chartFrom != "docs/performance.json" || o.chart != "/tmp/c.svg" {
		t.Errorf("-chart-from: %v, %+v", err, o)
	}
	if _, err := parseOptions([]string{"-chart-from", "x.json", "-chart", ""}); err == nil {
		t.Errorf("-chart-from without -chart: accepted")
	}
}
