package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// measure runs one cell once.
func (b *bench) measure(ctx context.Context, c *cell) (*sample, error) {
	switch {
	case c.bin != "":
		return b.serve(ctx, c)
	case c.store.kind == "postgres":
		return b.pgbench(ctx, c)
	default:
		return b.loop(ctx, c)
	}
}

// serve starts the service (or the peer, or the floor), loads it over HTTP,
// and stops it, reading its peak RSS just before.
func (b *bench) serve(ctx context.Context, c *cell) (*sample, error) {
	o := b.o
	var svc *service
	var err error
	if c.server == "service" {
		svc, err = startService(ctx, c.bin, b.dir, c.env)
	} else {
		svc, err = b.startPeer(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	var profiled <-chan error
	if o.profileDir != "" && c.server == "service" {
		name := fmt.Sprintf("%s-%s-%s-c%d-%d.pprof", c.store.kind, c.sc.name, c.load, c.conns, time.Now().Unix())
		profiled = svc.profile(filepath.Join(o.profileDir, strings.NewReplacer(" ", "-", "/", "", "+", "-").Replace(name)), o.warmup, b.length(c))
	}
	if c.sc.feed && c.store.cursors == nil {
		if c.store.cursors, err = b.feedCursors(ctx, "http://"+svc.api); err != nil {
			_ = svc.stop()
			return nil, err
		}
	}
	var s *sample
	if c.sc.measure != nil {
		s, err = c.sc.measure(b, ctx, c, svc)
	} else {
		s, err = b.httpLoad(ctx, "http://"+svc.api, c, svc.cmd.Process.Pid)
		if err == nil && c.sc.hook {
			s.delivered = b.rc.countIn(window{s.began, s.began.Add(s.window)})
		}
	}
	if profiled != nil {
		if err := <-profiled; err != nil {
			progress("no profile: %v", err)
		}
	}
	if err == nil {
		s.rss, err = svc.peakRSS()
	}
	if stopErr := svc.stop(); err == nil {
		err = stopErr
	}
	return s, err
}

// retriesPerRound bounds how often one disturbed round is measured again.
const retriesPerRound = 2

// runRounds runs every cell once per round, in the same order each round,
// so that slow drifts of the machine touch every cell alike. A round during
// which other work took more than -max-noise of the machine is measured
// again, whole, so that the rounds stay pairs; the third attempt counts
// whatever happened.
func (b *bench) runRounds(ctx context.Context) error {
	o := b.o
	for r, retries := 1, retriesPerRound; r <= o.rounds; {
		samples := make([]*sample, len(b.cells))
		disturbed := ""
		for i, c := range b.cells {
			name := fmt.Sprintf("%s %s %s c=%d", c.store.kind, c.sc.name, c.load, c.conns)
			if err := b.settle(ctx, c); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			s, err := b.measure(ctx, c)
			if err == nil && c.ids != nil {
				err = c.ids.check()
			}
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r, name, err)
			}
			samples[i] = s
			other, stolen := noise(c, s)
			q := func(p float64) string {
				if len(s.latencies) == 0 && s.quantiles == nil {
					return "–"
				}
				return s.percentile(p).Round(10 * time.Microsecond).String()
			}
			one := *c
			one.samples = []*sample{s}
			progress("round %d/%d  %-34s %8.0f/s  p50 %s p99 %s max %s  non-2xx %d  cpu µs/op %s  WAL B/op %s  other %.0f%% stolen %.0f%%%s",
				r, o.rounds, name, s.rate(), q(0.5), q(0.99), q(1), s.failed,
				cpuColumn(&one, c.sc.hook), walColumn(&one), 100*other, 100*stolen, hookProgress(c, s))
			if disturbed == "" && o.maxNoise > 0 && max(other, stolen) > o.maxNoise {
				disturbed = fmt.Sprintf("%s: other work %.0f%%, stolen %.0f%% of the machine", name, 100*other, 100*stolen)
			}
		}
		if disturbed != "" && retries > 0 {
			retries--
			b.discarded++
			progress("round %d disturbed (%s): measuring it again", r, disturbed)
			continue
		}
		for i, c := range b.cells {
			c.samples = append(c.samples, samples[i])
		}
		r, retries = r+1, retriesPerRound
	}
	return nil
}

// settle puts the store in the same state before every cell: a delete
// cell's range topped up, in a run that measures the webhook the outbox
// empty (or filled for a deliver cell) and the receiver's record cleared,
// the plants vacuumed, and nothing dirty waiting for a checkpoint.
func (b *bench) settle(ctx context.Context, c *cell) error {
	if b.rc != nil {
		if err := c.store.clearOutbox(ctx); err != nil {
			return err
		}
		if c.sc.name == "deliver" {
			if err := c.store.fillOutbox(ctx, b.rc.url, b.o.deliverEvents); err != nil {
				return err
			}
		}
		b.rc.reset()
	}
	if c.ids != nil {
		// pgbench runs a second longer than the window and warm-up.
		if from, to := c.ids.topUp(b.o.warmup + b.o.duration + time.Second); to > from {
			if err := c.store.load(ctx, from, to); err != nil {
				return err
			}
			c.ids.loaded = to
		}
		c.ids.start = c.ids.next.Load()
	}
	if err := c.store.renderMissingItems(ctx); err != nil {
		return err
	}
	if err := c.store.vacuum(ctx); err != nil {
		return err
	}
	return c.store.checkpoint(ctx)
}

// noise returns the shares of the machine's CPU that other work used and
// that the hypervisor stole during the window of s. Kernel threads and
// interrupts are not other work: they write the WAL or the SQLite file to
// disk and carry the loopback traffic for the programs measured (a loop
// committing each row keeps them about a tenth of the machine busy).
func noise(c *cell, s *sample) (other, stolen float64) {
	capacity := s.window.Seconds() * float64(runtime.NumCPU())
	return max(0, (s.cpu.busy-own(c, s.cpu)-s.cpu.kernel).Seconds()) / capacity, s.cpu.steal.Seconds() / capacity
}

// own is the CPU of the programs a cell measures: the service, the load,
// the webhook's receiver, and PostgreSQL when it is the store.
func own(c *cell, t cpuTimes) time.Duration {
	if c.store.kind == "postgres" {
		return t.service + t.load + t.receiver + t.postgres
	}
	return t.service + t.load + t.receiver
}
