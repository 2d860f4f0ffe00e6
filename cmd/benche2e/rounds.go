package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// cell is one line of the table: one load on one store, measured once per
// round.
type cell struct {
	store     string // "postgres" or "sqlite"
	load      string // what generates the writes
	conns     int
	service   bool // the service is measured (it has an RSS)
	reference bool // the ratio's denominator for its store
	run       func(ctx context.Context) (*sample, error)
	samples   []*sample
}

// cells lists the table's lines in the order a round runs them: each
// service cell right after the reference it is compared with.
func (b *bench) cells() []*cell {
	o := b.opts
	var cs []*cell
	if o.measures("postgres") {
		env := []string{"PLANTSTORE_DATABASE_URL=" + b.pg.url}
		for i, c := range o.pgbenchClients {
			cs = append(cs, &cell{store: "postgres", load: "pgbench INSERT", conns: c, reference: i == 0,
				run: func(ctx context.Context) (*sample, error) {
					return runPgbench(ctx, b.dir, b.pg.url, c, o.warmup, o.duration)
				}})
			if i < len(o.serviceConns) {
				cs = append(cs, b.serviceCells("postgres", o.serviceConns[i], env)...)
			}
		}
		for _, c := range o.serviceConns[min(len(o.serviceConns), len(o.pgbenchClients)):] {
			cs = append(cs, b.serviceCells("postgres", c, env)...)
		}
	}
	if o.measures("sqlite") {
		cs = append(cs, &cell{store: "sqlite", load: "Go loop, 1 row/tx", conns: 1, reference: true,
			run: func(ctx context.Context) (*sample, error) {
				cpu := probeCPU(ctx, o.warmup, o.duration, 0, 0, false)
				s, err := runSQLiteLoop(ctx, b.sqlite, o.warmup, o.duration)
				if err != nil {
					return nil, err
				}
				s.cpu = <-cpu
				return s, nil
			}})
		env := []string{"PLANTSTORE_DATABASE_URL=sqlite:" + b.sqlite}
		for _, c := range o.sqliteConns {
			cs = append(cs, b.serviceCells("sqlite", c, env)...)
		}
	}
	return cs
}

// serviceCells returns a service cell for every binary and variant measured.
func (b *bench) serviceCells(store string, conns int, env []string) []*cell {
	variants := b.opts.variants
	if len(variants) == 0 {
		variants = []variant{{}}
	}
	var cs []*cell
	for _, bin := range b.bins {
		for _, v := range variants {
			var labels []string
			if len(b.bins) > 1 {
				labels = append(labels, filepath.Base(bin))
			}
			if v.label != "" {
				labels = append(labels, v.label)
			}
			load := "service POST /plants"
			if len(labels) > 0 {
				load += " [" + strings.Join(labels, " ") + "]"
			}
			cs = append(cs, b.serviceCell(store, load, bin, conns, append(slices.Clone(env), v.env...)))
		}
	}
	return cs
}

// serviceCell starts the service bin on a store, loads it over HTTP with
// conns connections, and stops it, reading its peak RSS just before.
func (b *bench) serviceCell(store, load, bin string, conns int, env []string) *cell {
	// Later entries win: a variant's settings over -env, both over the run's.
	env = slices.Concat([]string{"PLANTSTORE_JWT_SECRET_FILE=" + b.secret}, b.opts.env, env)
	if b.opts.profileDir != "" {
		env = append(env, "PLANTSTORE_PROFILING=true")
	}
	return &cell{store: store, load: load, conns: conns, service: true,
		run: func(ctx context.Context) (*sample, error) {
			svc, err := startService(ctx, bin, b.dir, env)
			if err != nil {
				return nil, err
			}
			cpu := probeCPU(ctx, b.opts.warmup, b.opts.duration, svc.cmd.Process.Pid, 0, store == "postgres")
			var profiled <-chan error
			if b.opts.profileDir != "" {
				name := fmt.Sprintf("%s-c%d-%s-%d.pprof", store, conns, strings.NewReplacer(" ", "-", "/", "", "[", "", "]", "").Replace(load), time.Now().Unix())
				profiled = svc.profile(ctx, filepath.Join(b.opts.profileDir, name), b.opts.warmup, b.opts.duration)
			}
			s, loadErr := runLoad(ctx, svc.api, b.token, conns, b.opts.warmup, b.opts.duration)
			if profiled != nil {
				if err := <-profiled; err != nil {
					progress("no profile: %v", err)
				}
			}
			rss, rssErr := svc.peakRSS()
			stats := svc.stats()
			stopErr := svc.stop()
			switch {
			case loadErr != nil:
				return nil, loadErr
			case rssErr != nil:
				return nil, rssErr
			case stopErr != nil:
				return nil, stopErr
			}
			s.rss, s.service = rss, stats
			s.cpu = <-cpu
			return s, nil
		}}
}

// retriesPerRound bounds how often one disturbed round is measured again.
const retriesPerRound = 2

// runRounds runs every cell once per round, in the same order each round,
// so that slow drifts of the machine touch every cell alike. A round during
// which other work took a noticeable share of the machine is measured again,
// whole, so that the rounds stay pairs; the last attempt counts whatever
// happened.
func (b *bench) runRounds(ctx context.Context) ([]*cell, error) {
	cs := b.cells()
	retries := retriesPerRound
	for r := 1; r <= b.opts.rounds; {
		samples := make([]*sample, len(cs))
		disturbed := ""
		for i, c := range cs {
			if err := b.settle(ctx, c); err != nil {
				return nil, err
			}
			s, err := c.run(ctx)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s %s c=%d: %w", r, c.store, c.load, c.conns, err)
			}
			samples[i] = s
			q := func(p float64) time.Duration { return s.percentile(p).Round(10 * time.Microsecond) }
			progress("round %d/%d  %-8s %-22s c=%-3d %8.0f/s  p50 %s p90 %s p99 %s p99.9 %s max %s  failed %d%s  %s",
				r, b.opts.rounds, c.store, c.load, c.conns, s.rate(), q(0.50), q(0.90), q(0.99), q(0.999), q(1),
				s.failed, serviceNote(s), cpuNote(c, s))
			if other, stolen := noise(c, s); disturbed == "" && (other > b.opts.maxNoise || stolen > b.opts.maxNoise) && b.opts.maxNoise > 0 {
				disturbed = fmt.Sprintf("%s %s c=%d: other work %.0f%%, stolen %.0f%% of the machine", c.store, c.load, c.conns, 100*other, 100*stolen)
			}
		}
		if disturbed != "" && retries > 0 {
			retries--
			b.discarded++
			progress("round %d disturbed (%s): measuring it again", r, disturbed)
			continue
		}
		if disturbed != "" {
			progress("round %d disturbed (%s): kept, after %d attempts", r, disturbed, retriesPerRound+1)
		}
		for i, c := range cs {
			c.samples = append(c.samples, samples[i])
		}
		r++
		retries = retriesPerRound
	}
	if b.pg != nil {
		if n, err := b.pg.rows(ctx); err == nil {
			progress("PostgreSQL table holds %d rows", n)
		}
	}
	return cs, nil
}

// noise returns the shares of the machine's CPU that other work used and
// that the hypervisor stole during the window of s.
func noise(c *cell, s *sample) (other, stolen float64) {
	capacity := s.window.Seconds() * float64(runtime.NumCPU())
	t := s.cpu
	used := t.service + t.client
	if c.store == "postgres" {
		used += t.postgres
	}
	return max(0, (t.busy-used).Seconds()) / capacity, t.steal.Seconds() / capacity
}

// settle puts the store in the same state before every cell: nothing dirty
// waiting for a checkpoint.
func (b *bench) settle(ctx context.Context, c *cell) error {
	if c.store == "postgres" {
		if err := b.pg.checkpoint(ctx); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if c.store == "sqlite" {
		if err := checkpointSQLite(ctx, b.sqlite); err != nil {
			return fmt.Errorf("wal checkpoint: %w", err)
		}
	}
	return nil
}

func serviceNote(s *sample) string {
	if s.rss == 0 {
		return ""
	}
	return fmt.Sprintf("  rss %.1f MiB  batch %.1f in %s  served >10ms %.2f%%  %.1f KiB and %.4f GCs per request", float64(s.rss)/(1<<20),
		s.service.batch, s.service.batchTook.Round(10*time.Microsecond), 100*s.service.slowShare, s.service.allocated/1024, s.service.gcs)
}

// cpuNote says how much CPU one operation of c's sample s cost, and where,
// and how busy the machine was.
func cpuNote(c *cell, s *sample) string {
	one := &cell{store: c.store, service: c.service, samples: []*sample{s}}
	capacity := s.window.Seconds() * float64(runtime.NumCPU()) / 100
	return fmt.Sprintf("cpu µs/op %s, machine %.0f%% busy, %.0f%% stolen", cpuColumn(one),
		s.cpu.busy.Seconds()/capacity, s.cpu.steal.Seconds()/capacity)
}
