package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

// rows renders the report of b and returns its table: the header's cells,
// then each row's, by header.
func rows(t *testing.T, b *bench) (head []string, table []map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	b.report(&buf)
	split := func(line string) []string {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		return cells
	}
	for line := range strings.Lines(buf.String()) {
		line = strings.TrimSpace(line)
		switch {
		case !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---"):
		case head == nil:
			head = split(line)
		default:
			row := map[string]string{}
			for i, v := range split(line) {
				row[head[i]] = v
			}
			table = append(table, row)
		}
	}
	return head, table
}

// rated is a cell whose rounds completed these operations in a second each,
// its server spending µs of CPU on each.
func rated(c *cell, us int, completed ...int) *cell {
	for _, n := range completed {
		c.samples = append(c.samples, &sample{completed: n, window: time.Second,
			cpu: cpuTimes{service: time.Duration(us*n) * time.Microsecond}})
	}
	return c
}

// The service's rows show their rate over the peer's and the floor's of the
// same connections, paired by round; the references' rows mark themselves,
// and have their server's CPU per request like the service's.
func TestReportDividesTheServiceByThePeerAndTheFloor(t *testing.T) {
	pg := &store{kind: "postgres"}
	get := scenarioNamed("get")
	b := &bench{o: options{rounds: 2, duration: time.Second}, cells: []*cell{
		rated(&cell{store: pg, sc: get, load: "pgbench", conns: 16, ref: true}, 0, 100, 100),
		rated(&cell{store: pg, sc: get, load: "peer", conns: 64, server: "peer", bin: "peer"}, 80, 50, 60),
		rated(&cell{store: pg, sc: get, load: "floor", conns: 64, server: "floor", bin: "peer"}, 40, 100, 80),
		// Per round 3 and 2 over the peer: 2.5, not 135/55 the quotient of the medians.
		rated(&cell{store: pg, sc: get, load: "service", conns: 64, server: "service", bin: "plantstore"}, 30, 150, 120),
		rated(&cell{store: pg, sc: get, load: "service open 500/s", rate: 500, server: "service", bin: "plantstore"}, 30, 500, 500),
		rated(&cell{store: pg, sc: scenarioNamed("get-refused"), load: "service", conns: 64, server: "service", bin: "plantstore"}, 10, 300, 300),
	}}
	head, table := rows(t, b)
	if i := slices.Index(head, "ratio"); i < 0 || !slices.Equal(head[i:i+3], []string{"ratio", "÷ peer", "÷ floor"}) {
		t.Fatalf("header %v: want ÷ peer and ÷ floor after ratio", head)
	}
	cpu := head[len(head)-2]
	want := []struct{ load, ratio, peer, floor, cpu string }{
		{"pgbench", "1.00 (ref)", "–", "–", "– · "},
		{"peer", "0.55", "1.00 (ref)", "–", "80 · "},
		{"floor", "0.90", "–", "1.00 (ref)", "40 · "},
		{"service", "1.35", "2.50", "1.50", "30 · "},
		{"service open 500/s", "5.00", "–", "–", "30 · "},
		{"service", "3.00", "–", "–", "10 · "}, // get-refused: no peer rows
	}
	if len(table) != len(want) {
		t.Fatalf("%d rows, want %d", len(table), len(want))
	}
	for i, w := range want {
		r := table[i]
		if r["load"] != w.load || r["ratio"] != w.ratio || r["÷ peer"] != w.peer || r["÷ floor"] != w.floor || !strings.HasPrefix(r[cpu], w.cpu) {
			t.Errorf("row %d: %s ratio %s, ÷ peer %s, ÷ floor %s, cpu %s; want %+v", i, r["load"], r["ratio"], r["÷ peer"], r["÷ floor"], r[cpu], w)
		}
	}
	// Without the peer and the floor, the table is as it was.
	b.cells = slices.Delete(b.cells, 1, 3)
	head, _ = rows(t, b)
	if want := []string{"store", "op", "load", "conns", "req/s", "rounds (req/s)", "p50", "p99", "ratio", "non-2xx", "peak RSS",
		"CPU µs/op: service · postgres · load · other", "WAL B/op"}; !slices.Equal(head, want) {
		t.Errorf("header %v, want %v", head, want)
	}
}

// A PostgreSQL row shows the WAL its operations wrote, each, the median of
// the rounds; the embedded store's has none.
func TestReportShowsTheWALOfAnOperation(t *testing.T) {
	create := scenarioNamed("create")
	pg := &cell{store: &store{kind: "postgres"}, sc: create, load: "service", conns: 64, server: "service", bin: "plantstore"}
	for _, wal := range []int64{690, 700, 5000} {
		pg.samples = append(pg.samples, &sample{completed: 1000, window: time.Second, cpu: cpuTimes{wal: wal * 1000}})
	}
	lite := rated(&cell{store: &store{kind: "sqlite"}, sc: create, load: "service", conns: 64, server: "service", bin: "plantstore"}, 30, 100)
	b := &bench{o: options{rounds: 3, duration: time.Second}, cells: []*cell{pg, lite}}
	_, table := rows(t, b)
	if got := []string{table[0]["WAL B/op"], table[1]["WAL B/op"]}; !slices.Equal(got, []string{"700", "–"}) {
		t.Errorf("WAL B/op %v; want 700 (the median) on PostgreSQL and – on SQLite", got)
	}
}
