package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// bench is what a run sets up once: the service binaries, a token, the
// stores with their preloaded plants, and the cells.
type bench struct {
	o         options
	dir       string   // scratch directory: binary, secret, logs, SQLite file
	bins      []string // the binaries measured
	peer      string   // the peer's binary, built when the run has peer or floor rows
	secret    string   // file the service verifies tokens with
	token     string
	stores    []*store
	cells     []*cell
	discarded int // rounds measured again because other work disturbed them

	rc         *receiver // the webhook's receiver, when a scenario has one
	bouncer    *bouncer  // PgBouncer in transaction mode, with -pgbouncer
	hookSecret string    // file the service signs events with
}

// newBench builds the peer when the run has its rows (first: it fails fast
// on a wrong -peer-dir) and the service unless -bin names it, mints a token, creates
// both stores, migrates and preloads them. On error it undoes what it did.
func newBench(ctx context.Context, o options) (_ *bench, err error) {
	b := &bench{o: o, bins: o.bins}
	defer func() {
		if err != nil {
			b.cleanup()
		}
	}()
	if b.dir, err = os.MkdirTemp("", "plantstore-bench-"); err != nil {
		return nil, err
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return nil, err
		}
	}
	if o.wantsPeer() {
		if err := b.buildPeer(ctx); err != nil {
			return nil, err
		}
	}
	if len(b.bins) == 0 {
		if err := b.build(ctx); err != nil {
			return nil, err
		}
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	b.secret = filepath.Join(b.dir, "jwt.secret")
	if err := os.WriteFile(b.secret, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, err
	}
	out, err := b.plantstore(ctx, b.bins[0], nil, "token", "--jwt-secret-file", b.secret, "--subject", "bench",
		"--scope", "plants:read plants:write", "--ttl", "24h")
	if err != nil {
		return nil, err
	}
	b.token = strings.TrimSpace(out)
	if slices.ContainsFunc(scenarios, func(sc scenario) bool { return sc.hook && slices.Contains(o.ops, sc.name) }) {
		if b.rc, b.hookSecret, err = startReceiver(b.dir); err != nil {
			return nil, err
		}
	}
	for _, kind := range o.stores {
		if err := b.openStores(ctx, kind); err != nil {
			return nil, err
		}
	}
	b.cells = b.newCells()
	return b, nil
}

// openStores creates the stores of one kind: one the binaries share, or
// with -own-schema one for each, the first also the references'. Each is
// migrated by the binaries that run on it and preloaded alike.
func (b *bench) openStores(ctx context.Context, kind string) error {
	o := b.o
	groups := [][]string{b.bins}
	if o.ownSchema {
		groups = nil
		for _, bin := range b.bins {
			groups = append(groups, []string{bin})
		}
	}
	if kind == "postgres" {
		if _, err := exec.LookPath("pgbench"); err != nil {
			return errors.New("pgbench is not installed: install the PostgreSQL client (postgresql-client), or measure -stores sqlite only")
		}
	}
	for i, bins := range groups {
		var (
			s   *store
			err error
		)
		if kind == "postgres" {
			s, err = openPostgres(ctx, o.pgURL)
		} else {
			s, err = openSQLite(b.dir, fmt.Sprintf("plants-%d.db", i))
		}
		if err != nil {
			return err
		}
		if o.ownSchema {
			s.bin = bins[0]
		}
		b.stores = append(b.stores, s)
		if kind == "postgres" && o.pgbouncer && b.bouncer == nil {
			if b.bouncer, err = startBouncer(ctx, o.pgURL); err != nil {
				return err
			}
		}
		// Every build applies its schema, so that builds of different ages
		// each find the tables they use; migrations already applied are kept.
		for _, bin := range bins {
			if _, err := b.plantstore(ctx, bin, []string{"PLANTSTORE_DATABASE_URL=" + s.url}, "migrate"); err != nil {
				return err
			}
		}
		if o.preload > 0 {
			progress("loading %d plants into %s", o.preload, kind)
			if err := s.load(ctx, 1, o.preload+1); err != nil {
				return err
			}
		}
		if slices.ContainsFunc(scenarios, func(sc scenario) bool { return sc.feed && slices.Contains(o.ops, sc.name) }) {
			progress("loading %d events into %s", feedEvents, kind)
			if err := s.loadEvents(ctx, o.eventsPerRow); err != nil {
				return err
			}
		}
	}
	return nil
}

// build builds the service from the repository this tool stands in.
func (b *bench) build(ctx context.Context) error {
	progress("building the service")
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	bin := filepath.Join(b.dir, "plantstore")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/plantstore")
	cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/plantstore: %v\n%s", err, out)
	}
	b.bins = []string{bin}
	return nil
}

// plantstore runs a command of bin and returns its output.
func (b *bench) plantstore(ctx context.Context, bin string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = slices.Concat(os.Environ(), []string{"PLANTSTORE_LOG_LEVEL=warn"}, env)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("plantstore %s: %w", args[0], commandError(err))
	}
	return string(out), nil
}

func (b *bench) cleanup() {
	if b.bouncer != nil {
		b.bouncer.stop()
	}
	if b.rc != nil {
		b.rc.close()
	}
	for _, s := range b.stores {
		s.close()
	}
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

// commandError adds a failed command's standard error to its error.
func commandError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}
