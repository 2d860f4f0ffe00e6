// Command benche2e measures the service under load side by side with the
// physical reference of each store, on the same machine and in the same run:
//
//   - PostgreSQL: pgbench running the single-row INSERT ... ON CONFLICT DO
//     NOTHING a create amounts to, against the service posting creates over
//     HTTP with a real bearer token, both into the same table;
//   - the embedded store: a plain Go loop committing one row per transaction
//     with the store's durability settings, against the service on that file.
//
// Cells run interleaved (A B A B ...) for a number of rounds, each after a
// checkpoint, and the table reports the median of the rounds. It is what
// `make bench-e2e` runs; docs/performance.md explains the method.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// options are the command line of a run.
type options struct {
	duration       time.Duration
	warmup         time.Duration
	rounds         int
	pgURL          string
	stores         []string
	pgbenchClients []int
	serviceConns   []int
	sqliteConns    []int
	preload        int
	env            []string
	variants       []variant
	bins           []string
	keep           bool
	waitIdle       float64
	clientProcs    int
	profileDir     string
	waitIdleMax    time.Duration
	maxNoise       float64
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "benche2e:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	if o.clientProcs > 0 {
		runtime.GOMAXPROCS(o.clientProcs)
	}
	if o.waitIdle > 0 {
		if err := waitForIdle(ctx, o.waitIdle, o.waitIdleMax); err != nil {
			return err
		}
	}
	b, err := newBench(ctx, o)
	if err != nil {
		return err
	}
	defer b.cleanup()
	rows, err := b.runRounds(ctx)
	if err != nil {
		return err
	}
	report(os.Stdout, b.machine, o, rows, b.discarded)
	return nil
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("benche2e", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time of each cell")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "load before each cell's measurement starts, not counted")
	fs.IntVar(&o.rounds, "rounds", 3, "interleaved rounds; the table shows the median")
	fs.StringVar(&o.pgURL, "pg-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"PostgreSQL server where a fresh database is created for the run and dropped after it")
	stores := fs.String("stores", "postgres,sqlite", "stores to measure: postgres, sqlite or both")
	pgbenchClients := fs.String("pgbench-clients", "16", "pgbench client counts; the first is the reference of the ratio")
	serviceConns := fs.String("conns", "64", "HTTP connections of the service cells on PostgreSQL")
	sqliteConns := fs.String("sqlite-conns", "64", "HTTP connections of the service cells on the embedded store")
	fs.IntVar(&o.preload, "preload", 0, "rows loaded into each store before the first round (for example 10000000)")
	fs.Func("env", "NAME=VALUE for every service run (repeatable): a PLANTSTORE_ setting, GOGC, GOMEMLIMIT or GOMAXPROCS", func(v string) error {
		if err := checkEnv(v); err != nil {
			return err
		}
		o.env = append(o.env, v)
		return nil
	})
	fs.Func("variant", "LABEL or LABEL:NAME=VALUE,NAME=VALUE: one more line per service cell, run with these settings (repeatable)", func(v string) error {
		vr, err := parseVariant(v)
		if err != nil {
			return err
		}
		o.variants = append(o.variants, vr)
		return nil
	})
	fs.Func("bin", "a plantstore binary to measure instead of building ./cmd/plantstore (repeatable: each gets its own service lines)", func(v string) error {
		o.bins = append(o.bins, v)
		return nil
	})
	fs.IntVar(&o.clientProcs, "client-procs", 0, "GOMAXPROCS of this program, which generates the HTTP load (0: Go's default, every core)")
	fs.StringVar(&o.profileDir, "profile", "", "save a CPU profile of every service cell's measured window into this directory (turns PLANTSTORE_PROFILING on)")
	fs.BoolVar(&o.keep, "keep", false, "keep the benchmark database and files instead of dropping them")
	fs.Float64Var(&o.waitIdle, "wait-idle", 0, "before starting, wait until the 1-minute load average is below this (0: do not wait)")
	fs.DurationVar(&o.waitIdleMax, "wait-idle-max", 40*time.Minute, "longest wait for -wait-idle")
	fs.Float64Var(&o.maxNoise, "max-noise", 0.05, "measure a round again when other work, or the hypervisor, took more than this share of the machine during one of its cells (0: never); at most twice per round")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.duration < time.Second || o.rounds < 1 || o.warmup < 0 {
		return o, errors.New("-duration must be at least 1s, -rounds at least 1 and -warmup not negative")
	}
	o.stores = strings.Split(*stores, ",")
	for _, s := range o.stores {
		if s != "postgres" && s != "sqlite" {
			return o, fmt.Errorf("-stores: unknown store %q", s)
		}
	}
	var err error
	if o.pgbenchClients, err = counts(*pgbenchClients); err != nil {
		return o, fmt.Errorf("-pgbench-clients: %w", err)
	}
	if o.serviceConns, err = counts(*serviceConns); err != nil {
		return o, fmt.Errorf("-conns: %w", err)
	}
	if o.sqliteConns, err = counts(*sqliteConns); err != nil {
		return o, fmt.Errorf("-sqlite-conns: %w", err)
	}
	return o, nil
}

func (o options) measures(store string) bool { return slices.Contains(o.stores, store) }

func counts(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}
