// Command benche2e measures the service under load side by side with the
// physical reference of each store, on the same machine and in the same run:
// pgbench running the SQL an operation amounts to on PostgreSQL, and a plain
// Go loop running it on the embedded SQLite store with the store's own
// durability settings. Each operation (create, get, list, list-tag, delete,
// ...) is one scenario; the service is loaded over HTTP, at fixed
// concurrency (-conns, by wrk) or at a fixed rate (-rate, an open loop by
// vegeta). More measure the webhook with a receiver this tool runs: writes
// with a receiver configured (create+hook, change+hook and delete+hook,
// against the references of the write; with -variant for each webhook
// payload, which announces creates only, or every write), the lag from a
// create's answer to its event at a steady rate (lag), and the highest rate
// one replica delivers a filled outbox at (deliver).
// With -pgbouncer, every service cell on PostgreSQL is measured once more
// through a PgBouncer in transaction mode that the run starts.
//
// On PostgreSQL, create, get, list and delete also have two reference
// services as rows of their own (-refs), built once per run from -peer-dir
// (../shared/tools/peer) and loaded by the same wrk at the service's
// connections with the same token: the peer, the hand-written chi + sqlx +
// golang-jwt service with a JSON access log, and the floor, HTTP and the
// store alone. The service's rows show their rate divided by each one's
// (÷ peer, ÷ floor), and every server's own CPU per request.
//
// Cells run interleaved (A B A B ...) for a number of rounds, each after a
// checkpoint, and one Markdown table of the medians goes to standard output,
// progress to standard error. The run is then drawn against the targets
// (-chart, docs/performance.svg), its cells saved beside the chart as JSON,
// from which -chart-from draws it again. It is what `make bench-e2e` runs;
// docs/performance.md explains the method.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command line of a run.
type options struct {
	duration, warmup   time.Duration
	rounds             int
	pgURL              string
	stores, ops        []string
	conns, sqliteConns []int // nil: each scenario's own
	pgbenchClients     []int
	rates              []int
	preload            int64
	env                []string
	variants           []variant
	pgbouncer          bool     // every PostgreSQL service cell once more through PgBouncer
	refs               []string // the references: pgbench, peer, floor
	peerDir            string   // the peer's sources; relative: from the repository root
	bins               []string
	ownSchema          bool // each binary on a database of its own, which only it migrated
	profileDir         string
	waitIdle, maxNoise float64
	// The webhook's cells: the rate, window and drain of lag; the events
	// deliver starts from.
	lagRate               int
	lagDuration, lagDrain time.Duration
	deliverEvents         int
	// eventsPerRow is how many events of the preloaded feed make one row
	// of plant_events, as one statement's events do.
	eventsPerRow int
	// chart is the SVG the run is drawn into against the targets, its
	// cells saved beside it; chartFrom, cells a run saved, to draw again.
	chart, chartFrom string
}

// variant is one set of settings the service is measured with.
type variant struct {
	label string
	env   []string
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
	if o.chart != "" {
		o.chart, o.chartFrom = fromRoot(ctx, o.chart), fromRoot(ctx, o.chartFrom)
		if o.chartFrom != "" {
			return redraw(o.chartFrom, o.chart)
		}
		// Known before the run, not after it.
		if fi, err := os.Stat(filepath.Dir(o.chart)); err != nil || !fi.IsDir() {
			return fmt.Errorf("-chart %s: no directory to write it in", o.chart)
		}
	}
	if err := waitForIdle(ctx, o.waitIdle); err != nil {
		return err
	}
	b, err := newBench(ctx, o)
	if err != nil {
		return err
	}
	defer b.cleanup()
	if err := b.runRounds(ctx); err != nil {
		return err
	}
	b.report(os.Stdout)
	if o.chart == "" {
		return nil
	}
	r, saved := b.results(args), jsonBeside(o.chart)
	if err := r.save(saved); err != nil {
		return err
	}
	if err := drawChart(o.chart, r); err != nil {
		return err
	}
	progress("drew %s; its cells are in %s", o.chart, saved)
	return nil
}

// redraw draws the chart of the cells a run saved, measuring nothing.
func redraw(from, chart string) error {
	r, err := loadResults(from)
	if err != nil {
		return err
	}
	if err := drawChart(chart, r); err != nil {
		return err
	}
	progress("drew %s from %s", chart, from)
	return nil
}

// fromRoot takes a relative path from the repository root, as make runs
// the tool; where no root is found (a static build on another machine),
// from the working directory.
func fromRoot(ctx context.Context, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return path
	}
	return filepath.Join(root, path)
}

func parseOptions(args []string) (options, error) {
	o := options{preload: -1, pgbenchClients: []int{16}, stores: []string{"postgres", "sqlite"}, ops: scenarioNames(), refs: refNames}
	fs := flag.NewFlagSet("benche2e", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time of each cell")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "load before each cell's window opens, not counted")
	fs.IntVar(&o.rounds, "rounds", 3, "interleaved rounds; the table shows their median")
	fs.StringVar(&o.pgURL, "pg-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"PostgreSQL server where a fresh database is created for the run and dropped after it")
	words(fs, &o.stores, "stores", "stores to measure", []string{"postgres", "sqlite"})
	words(fs, &o.ops, "ops", "operations to measure", scenarioNames())
	counts(fs, &o.conns, "conns", "HTTP connections of the closed-loop service, peer and floor cells (default 64, 16 for list and list-tag)")
	counts(fs, &o.sqliteConns, "sqlite-conns", "the same on the embedded store (default as -conns)")
	counts(fs, &o.pgbenchClients, "pgbench-clients", "pgbench clients; the first is the reference of the ratio (default 16)")
	counts(fs, &o.rates, "rate", "requests per second of open-loop service cells, besides the closed-loop ones")
	fs.Func("preload", "plants 1..N loaded before the first round (default 1000000 when get, get-not-modified, get-refused, list, list-tag, change, delete or their +hook is measured, else 0)", func(v string) (err error) {
		if o.preload, err = strconv.ParseInt(v, 10, 64); err == nil && o.preload < 0 {
			err = errors.New("want a count of plants")
		}
		return err
	})
	fs.Func("env", "NAME=VALUE for every service run (repeatable): a PLANTSTORE_ setting, GOGC, GOMEMLIMIT or GOMAXPROCS", func(v string) error {
		o.env = append(o.env, v)
		return checkEnv(v)
	})
	fs.Func("variant", "LABEL or LABEL:NAME=VALUE,...: one more line per service cell, with these settings (repeatable)", func(v string) error {
		label, settings, _ := strings.Cut(v, ":")
		vr := variant{label: label, env: strings.FieldsFunc(settings, func(r rune) bool { return r == ',' })}
		o.variants = append(o.variants, vr)
		if label == "" {
			return errors.New("a variant needs a label, as gogc100:GOGC=100")
		}
		for _, kv := range vr.env {
			if err := checkEnv(kv); err != nil {
				return err
			}
		}
		return nil
	})
	fs.Func("bin", "a plantstore binary to measure instead of building ../../cmd/plantstore (repeatable)", func(v string) error {
		o.bins = append(o.bins, v)
		return nil
	})
	fs.BoolVar(&o.ownSchema, "own-schema", false, "give each -bin a database of its own on each store, migrated by that binary alone, so that an older build runs on the schema it shipped with (its triggers included) rather than on the newest; the references run on the first binary's")
	words(fs, &o.refs, "refs", "references of the PostgreSQL cells (the embedded store's is its Go loop): pgbench, and the peer and the floor built from -peer-dir for create, get, list and delete", refNames)
	fs.StringVar(&o.peerDir, "peer-dir", "../shared/tools/peer", "the sources of the peer and the floor, built once per run; a relative path is from the repository root")
	fs.BoolVar(&o.pgbouncer, "pgbouncer", false, "measure every PostgreSQL service cell once more through a PgBouncer in transaction mode that the run starts (/usr/sbin/pgbouncer, server pool 20), labelled \"service pgbouncer\"")
	fs.StringVar(&o.profileDir, "profile", "", "save a CPU profile of every service cell's window into this directory")
	fs.Float64Var(&o.waitIdle, "wait-idle", 0, "first wait until the 1-minute load average is below this (0: do not wait)")
	fs.IntVar(&o.lagRate, "lag-rate", 2000, "creates per second of the lag cell, an open loop")
	fs.DurationVar(&o.lagDuration, "lag-duration", 30*time.Second, "measured time of the lag cell")
	fs.DurationVar(&o.lagDrain, "lag-drain", 5*time.Second, "how long the lag cell waits after its window for the events still on their way")
	fs.IntVar(&o.deliverEvents, "deliver-events", 60000, "due events in the outbox when a deliver cell's service starts; the last four fifths are measured")
	fs.IntVar(&o.eventsPerRow, "events-per-row", 16, "events of the preloaded feed kept in one row of plant_events on PostgreSQL, as one write statement's are (builds that keep a row per event: one)")
	fs.StringVar(&o.chart, "chart", "docs/performance.svg", "draw the service against the targets into this SVG after the run, and save the run's cells beside it (the same name, .json); a relative path is from the repository root; empty: none")
	fs.StringVar(&o.chartFrom, "chart-from", "", "measure nothing: draw -chart again from the cells a run saved (its .json); a relative path is from the repository root")
	fs.Float64Var(&o.maxNoise, "max-noise", 0.05, "measure a round again (at most twice) when other work or the hypervisor took more than this share of the machine in one of its cells; 0: never")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.sqliteConns == nil {
		o.sqliteConns = o.conns
	}
	reads := slices.ContainsFunc(o.ops, func(op string) bool {
		return slices.Contains([]string{"get", "get-not-modified", "get-refused", "list", "list-tag", "change", "change+hook"}, op)
	})
	if o.preload < 0 {
		o.preload = 0
		if reads || slices.Contains(o.ops, "delete") || slices.Contains(o.ops, "delete+hook") {
			o.preload = 1_000_000
		}
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.duration < time.Second || o.rounds < 1 || o.warmup < 0:
		return o, errors.New("-duration must be at least 1s, -rounds at least 1 and -warmup not negative")
	case o.lagRate < 1 || o.lagDuration < time.Second || o.lagDrain < 0 || o.deliverEvents < 5:
		return o, errors.New("-lag-rate must be positive, -deliver-events at least 5, -lag-duration at least 1s and -lag-drain not negative")
	case reads && o.preload < listLimit:
		return o, fmt.Errorf("get, get-not-modified, get-refused, list, list-tag, change and change+hook need -preload of at least %d", listLimit)
	case len(o.pgbenchClients) == 0:
		return o, errors.New("-pgbench-clients: want at least one")
	case o.chartFrom != "" && o.chart == "":
		return o, errors.New("-chart-from draws into -chart: give it a path")
	}
	return o, nil
}

// waitForIdle waits, up to 40 minutes, until the 1-minute load average falls
// below limit: other work on the machine would be measured with the service.
func waitForIdle(ctx context.Context, limit float64) error {
	for start := time.Now(); limit > 0; {
		var load float64
		data, err := os.ReadFile("/proc/loadavg")
		if _, err2 := fmt.Sscan(string(data), &load); err != nil || err2 != nil || load < limit {
			return errors.Join(err, err2)
		}
		if time.Since(start) > 40*time.Minute {
			return fmt.Errorf("load average still %.2f after 40 minutes (want below %.2f)", load, limit)
		}
		progress("load average %.2f, waiting for it to fall below %.2f", load, limit)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(30 * time.Second):
		}
	}
	return nil
}

// progress reports what the run is doing on standard error, so that the
// table alone goes to standard output.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
