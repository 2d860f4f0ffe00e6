package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// cell is one line of the table: one load of one scenario on one store,
// measured once per round.
type cell struct {
	store    *store
	sc       scenario
	load     string // "pgbench", "Go loop", "peer", "floor" or "service", then the service's labels
	conns    int    // connections, clients or loops; 0 for an open loop
	rate     int    // requests per second of an open loop
	server   string // what is loaded over HTTP: "service", or the peer or the floor; "" for pgbench and the Go loop
	bin      string // the server's binary; "" for pgbench and the Go loop
	env      []string
	ref      bool          // the ratio's denominator for its store and scenario
	ids      *idRange      // the ids a delete cell consumes
	duration time.Duration // the window when not -duration (lag)
	samples  []*sample
}

// newCells lists the table's lines in the order a round runs them: per kind
// of store and scenario the references (pgbench or the Go loop, then the
// peer and the floor at each concurrency), then the service with every
// binary and variant (each followed, with -pgbouncer on PostgreSQL, by the
// same through PgBouncer), at each concurrency, then at each rate; with
// -own-schema, each binary on its own store.
func (b *bench) newCells() []*cell {
	o := b.o
	variants := o.variants
	if len(variants) == 0 {
		variants = []variant{{}}
	}
	var cs []*cell
	service := func(st *store, sc scenario, conns, rate int, d time.Duration) {
		for _, bin := range b.bins {
			if st.bin != "" && st.bin != bin {
				continue
			}
			for _, v := range variants {
				labels := []string{"service"}
				if rate > 0 {
					labels = append(labels, fmt.Sprintf("open %d/s", rate))
				}
				if len(b.bins) > 1 {
					labels = append(labels, filepath.Base(bin))
				}
				// Later entries win: a variant's settings over -env over the run's.
				env := []string{"PLANTSTORE_DATABASE_URL=" + st.url, "PLANTSTORE_JWT_SECRET_FILE=" + b.secret}
				if sc.hook {
					env = append(env, "PLANTSTORE_WEBHOOK_URLS="+b.rc.url, "PLANTSTORE_WEBHOOK_SECRET_FILE="+b.hookSecret)
				}
				env = slices.Concat(env, o.env, v.env)
				if o.profileDir != "" {
					env = append(env, "PLANTSTORE_PROFILING=true")
				}
				cs = append(cs, &cell{store: st, sc: sc, load: strings.Join(append(labels, v.label), " "),
					conns: conns, rate: rate, server: "service", bin: bin, env: env, duration: d})
				if b.bouncer != nil && st.kind == "postgres" {
					pooled := slices.Concat([]string{"service", "pgbouncer"}, labels[1:], []string{v.label})
					cs = append(cs, &cell{store: st, sc: sc, load: strings.Join(pooled, " "),
						conns: conns, rate: rate, server: "service", bin: bin, env: b.bouncer.env(env, st.url), duration: d})
				}
			}
		}
	}
	// Per scenario, the stores of a kind (one per binary with -own-schema)
	// take their turns, so that every build's cells of a scenario run close
	// together; the first of a kind holds the references.
	var kinds []string
	for _, st := range b.stores {
		if !slices.Contains(kinds, st.kind) {
			kinds = append(kinds, st.kind)
		}
	}
	for _, kind := range kinds {
		for _, sc := range scenarios {
			first := true
			for _, st := range b.stores {
				if st.kind != kind || !slices.Contains(o.ops, sc.name) {
					continue
				}
				b.scenarioCells(&cs, st, sc, first, service)
				first = false
			}
		}
	}
	for i, c := range cs {
		c.load = strings.TrimSpace(c.load)
		if c.sc.consumes {
			c.ids = newIDRange(int64(i+1) * deleteRanges)
		}
	}
	return cs
}

// scenarioCells appends the cells of scenario sc on store st to cs: its
// references when st holds them (refs), then the service's cells (service).
func (b *bench) scenarioCells(cs *[]*cell, st *store, sc scenario, refs bool, service func(*store, scenario, int, int, time.Duration)) {
	o := b.o
	switch {
	case sc.name == "lag":
		service(st, sc, 0, o.lagRate, o.lagDuration)
		return
	case sc.measure != nil:
		service(st, sc, 0, 0, 0)
		return
	}
	// A scenario sharing another's references gets them here only when
	// that one is not measured too.
	ref := scenarioNamed(sc.refName())
	if refs && (ref.name == sc.name || !slices.Contains(o.ops, ref.name)) {
		if st.kind == "postgres" && slices.Contains(o.refs, "pgbench") {
			for i, n := range o.pgbenchClients {
				*cs = append(*cs, &cell{store: st, sc: ref, load: "pgbench", conns: n, ref: i == 0})
			}
		} else if st.kind == "sqlite" {
			*cs = append(*cs, &cell{store: st, sc: ref, load: "Go loop", conns: 1, ref: true})
		}
	}
	conns := o.conns
	if st.kind == "sqlite" {
		conns = o.sqliteConns
	}
	if conns == nil {
		conns = []int{sc.conns}
	}
	if b.peer != "" && refs && st.kind == "postgres" && slices.Contains(peerOps, sc.name) {
		for _, n := range conns {
			for _, r := range []string{peerRef, floorRef} {
				if slices.Contains(o.refs, r) {
					*cs = append(*cs, &cell{store: st, sc: sc, load: r, conns: n, server: r, bin: b.peer, env: peerEnv(o.env)})
				}
			}
		}
	}
	for _, n := range conns {
		service(st, sc, n, 0, 0)
	}
	for _, rate := range o.rates {
		service(st, sc, 0, rate, 0)
	}
}
