package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The two reference services of ../shared/tools/peer, loaded over HTTP like
// the service on the same PostgreSQL database: the peer (chi, sqlx,
// golang-jwt, a JSON access log) is what a Go team writes by hand for the
// same API; the floor (-floor: no token, no log, prepared statements) is
// what HTTP and the store alone cost.
const (
	peerRef  = "peer"
	floorRef = "floor"
)

// refNames are the references -refs picks from: pgbench on PostgreSQL, and
// the two services built from -peer-dir.
var refNames = []string{"pgbench", peerRef, floorRef}

// peerOps are the operations the peer and the floor serve: no change, no
// tag filter, no webhook.
var peerOps = []string{"create", "get", "list", "delete"}

// wantsPeer tells whether the run has peer or floor rows, and so needs the
// peer built.
func (o options) wantsPeer() bool {
	return slices.Contains(o.stores, "postgres") &&
		(slices.Contains(o.refs, peerRef) || slices.Contains(o.refs, floorRef)) &&
		slices.ContainsFunc(o.ops, func(op string) bool { return slices.Contains(peerOps, op) })
}

// buildPeer builds the peer once for the run into its scratch directory. A
// relative -peer-dir is taken from the repository root, as make passes it.
func (b *bench) buildPeer(ctx context.Context) error {
	dir := b.o.peerDir
	if !filepath.IsAbs(dir) {
		root, err := moduleRoot(ctx)
		if err != nil {
			return err
		}
		dir = filepath.Join(root, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
		return fmt.Errorf("-peer-dir %s holds no peer (main.go): give the directory of shared/tools/peer, or -refs pgbench", dir)
	}
	progress("building the peer from %s", dir)
	bin := filepath.Join(b.dir, "peer")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", bin, ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in -peer-dir %s: %v\n%s", dir, err, out)
	}
	b.peer = bin
	return nil
}

// moduleRoot is the directory of the service's module, which this tool's
// go.mod replaces with the repository it stands in.
func moduleRoot(ctx context.Context) (string, error) {
	root, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/plantstore/plantstore").Output()
	if err != nil {
		return "", fmt.Errorf("find the service's module (run from tools/benche2e, or give -bin): %w", commandError(err))
	}
	return strings.TrimSpace(string(root)), nil
}

// peerArgs is the command line of the peer (or the floor) on addr: the
// floor checks no token, so it gets no secret.
func peerArgs(ref, addr, dsn, secretFile string) []string {
	args := []string{"-addr", addr, "-dsn", dsn}
	if ref == floorRef {
		return append(args, "-floor")
	}
	return append(args, "-secret-file", secretFile)
}

// peerEnv keeps of the run's -env the Go runtime's knobs, which the
// references run with too, so that a run with GOMAXPROCS=1 compares like
// with like; the service's own settings mean nothing to them.
func peerEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PLANTSTORE_") {
			out = append(out, kv)
		}
	}
	return out
}

// startPeer runs the peer or the floor of cell c and waits until it listens
// (it connects to the database and prepares its statements before). Its
// access log goes to a file, as the service's does.
func (b *bench) startPeer(ctx context.Context, c *cell) (*service, error) {
	api, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.bin, peerArgs(c.server, api, c.store.url, b.secret)...)
	cmd.Env = append(os.Environ(), c.env...)
	s := &service{cmd: cmd, api: api, untidy: true}
	err = s.start(ctx, b.dir, func() bool {
		conn, err := net.DialTimeout("tcp", api, time.Second)
		if err == nil {
			_ = conn.Close()
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}
