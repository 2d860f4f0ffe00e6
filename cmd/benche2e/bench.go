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
	"time"
)

// bench holds what a run sets up once: the service binary, a token, the
// PostgreSQL database and the embedded store's file.
type bench struct {
	opts    options
	dir     string   // scratch directory: binary, secret, files, logs
	bin     string   // the binary that mints the token and migrates
	bins    []string // the binaries measured
	secret  string   // secret file the service verifies tokens with
	token   string
	pg      *pgDatabase
	sqlite  string // embedded store's file
	machine machine
	// discarded counts the rounds measured again because other work
	// disturbed them.
	discarded int
	cleanups  []func()
}

// newBench builds the service and prepares both stores. On error it undoes
// what it did.
func newBench(ctx context.Context, o options) (b *bench, err error) {
	b = &bench{opts: o}
	defer func() {
		if err != nil {
			b.cleanup()
		}
	}()
	if b.dir, err = os.MkdirTemp("", "plantstore-bench-"); err != nil {
		return nil, err
	}
	if !o.keep {
		b.cleanups = append(b.cleanups, func() { _ = os.RemoveAll(b.dir) })
	}
	if b.bins = o.bins; len(b.bins) == 0 {
		progress("building the service")
		built := filepath.Join(b.dir, "plantstore")
		build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", built, "./cmd/plantstore")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/plantstore (run from the module root): %v\n%s", err, out)
		}
		b.bins = []string{built}
	}
	b.bin = b.bins[0]
	if err := b.mintToken(ctx); err != nil {
		return nil, err
	}
	b.machine = describeMachine(ctx, o.pgURL)

	if o.measures("postgres") {
		if _, err := exec.LookPath("pgbench"); err != nil {
			return nil, errors.New("pgbench is not installed: install the PostgreSQL client (postgresql-client), or measure -stores sqlite only")
		}
		if b.pg, err = createDatabase(ctx, o.pgURL); err != nil {
			return nil, err
		}
		if !o.keep {
			b.cleanups = append(b.cleanups, func() {
				if err := b.pg.drop(); err != nil {
					progress("could not drop database %s: %v", b.pg.name, err)
				}
			})
		}
		progress("created database %s", b.pg.name)
		if err := b.migrate(ctx, b.pg.url); err != nil {
			return nil, err
		}
		if o.preload > 0 {
			progress("loading %d rows into PostgreSQL", o.preload)
			if err := b.pg.preload(ctx, o.preload); err != nil {
				return nil, err
			}
		}
	}
	if o.measures("sqlite") {
		b.sqlite = filepath.Join(b.dir, "plants.db")
		if err := b.migrate(ctx, "sqlite:"+b.sqlite); err != nil {
			return nil, err
		}
		if o.preload > 0 {
			progress("loading %d rows into the embedded store", o.preload)
			if err := preloadSQLite(ctx, b.sqlite, o.preload); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// mintToken writes a random HS256 secret and mints a token with it through
// the service's own token command, as an operator would.
func (b *bench) mintToken(ctx context.Context) error {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	b.secret = filepath.Join(b.dir, "jwt.secret")
	if err := os.WriteFile(b.secret, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, b.bin, "token", "--jwt-secret-file", b.secret,
		"--subject", "bench", "--ttl", "24h").Output()
	if err != nil {
		return fmt.Errorf("plantstore token: %w", commandError(err))
	}
	b.token = strings.TrimSpace(string(out))
	return nil
}

// migrate applies the schema with `plantstore migrate`.
func (b *bench) migrate(ctx context.Context, databaseURL string) error {
	cmd := exec.CommandContext(ctx, b.bin, "migrate")
	cmd.Env = append(os.Environ(), "PLANTSTORE_DATABASE_URL="+databaseURL, "PLANTSTORE_LOG_LEVEL=warn")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("plantstore migrate: %v\n%s", err, out)
	}
	return nil
}

func (b *bench) cleanup() {
	for _, f := range slices.Backward(b.cleanups) {
		f()
	}
	b.cleanups = nil
}

// commandError adds a failed command's standard error to its error.
func commandError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}

// progress reports what the run is doing on standard error, so that the
// table alone goes to standard output.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
