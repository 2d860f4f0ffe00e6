package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The peer checks the service's token with the run's secret file; the floor
// checks none and is told so.
func TestPeerArgs(t *testing.T) {
	if got, want := peerArgs("peer", "127.0.0.1:1", "postgres://db", "/run/jwt.secret"),
		[]string{"-addr", "127.0.0.1:1", "-dsn", "postgres://db", "-secret-file", "/run/jwt.secret"}; !slices.Equal(got, want) {
		t.Errorf("peer: %v, want %v", got, want)
	}
	if got, want := peerArgs("floor", "127.0.0.1:1", "postgres://db", "/run/jwt.secret"),
		[]string{"-addr", "127.0.0.1:1", "-dsn", "postgres://db", "-floor"}; !slices.Equal(got, want) {
		t.Errorf("floor: %v, want %v", got, want)
	}
	if got := peerEnv([]string{"GOGC=100", "PLANTSTORE_LOG_LEVEL=warn", "GOMAXPROCS=1"}); !slices.Equal(got, []string{"GOGC=100", "GOMAXPROCS=1"}) {
		t.Errorf("peerEnv = %v, want the Go runtime's knobs only", got)
	}
}

// The peer is built only when a PostgreSQL cell of an operation it serves
// asks for it or the floor.
func TestWantsPeer(t *testing.T) {
	for args, want := range map[string]bool{
		"":                                 true,
		"-ops list,change":                 true,
		"-refs floor -ops delete":          true,
		"-refs pgbench":                    false,
		"-stores sqlite":                   false,
		"-ops change,list-tag,get-refused": false,
	} {
		o, err := parseOptions(strings.Fields(args))
		if err != nil {
			t.Fatal(err)
		}
		if got := o.wantsPeer(); got != want {
			t.Errorf("%q: wantsPeer %v, want %v", args, got, want)
		}
	}
}

// A -peer-dir without the peer fails in one line that names the flag,
// before anything is built.
func TestMissingPeerDirIsNamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nowhere")
	b := &bench{o: options{peerDir: dir}, dir: t.TempDir()}
	err := b.buildPeer(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "-peer-dir "+dir) || strings.Contains(err.Error(), "\n") {
		t.Errorf("buildPeer = %v, want one line naming -peer-dir %s", err, dir)
	}
}

// On PostgreSQL the peer and the floor join the references of the
// operations they serve, at each of the service's connections and only in
// closed loops; -refs picks which references run.
func TestPeerAndFloorRowsBesideTheService(t *testing.T) {
	b := &bench{bins: []string{"plantstore"}, peer: "/tmp/peer",
		stores: []*store{{kind: "postgres", url: "postgres://db"}, {kind: "sqlite", url: "sqlite:/tmp/p.db"}}}
	lines := func(args string) []string {
		var err error
		if b.o, err = parseOptions(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range b.newCells() {
			line := strings.Join([]string{c.store.kind, c.sc.name, c.load}, " ")
			if c.conns > 0 {
				line += " c" + strconv.Itoa(c.conns)
			}
			if c.server == "peer" || c.server == "floor" {
				if c.bin != b.peer || !slices.Equal(c.env, []string{"GOGC=50"}) {
					t.Errorf("%s: binary %s, env %v; want the peer with the runtime's settings", line, c.bin, c.env)
				}
			}
			out = append(out, line)
		}
		return out
	}
	got := lines("-ops list,list-tag,change -conns 8,16 -rate 500 -env GOGC=50 -env PLANTSTORE_LOG_LEVEL=warn")
	want := []string{
		"postgres list pgbench c16",
		"postgres list peer c8", "postgres list floor c8", "postgres list peer c16", "postgres list floor c16",
		"postgres list service c8", "postgres list service c16", "postgres list service open 500/s",
		"postgres list-tag pgbench c16",
		"postgres list-tag service c8", "postgres list-tag service c16", "postgres list-tag service open 500/s",
		"postgres change pgbench c16",
		"postgres change service c8", "postgres change service c16", "postgres change service open 500/s",
		"sqlite list Go loop c1", "sqlite list service c8", "sqlite list service c16", "sqlite list service open 500/s",
		"sqlite list-tag Go loop c1", "sqlite list-tag service c8", "sqlite list-tag service c16", "sqlite list-tag service open 500/s",
		"sqlite change Go loop c1", "sqlite change service c8", "sqlite change service c16", "sqlite change service open 500/s",
	}
	if !slices.Equal(got, want) {
		t.Errorf("cells:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b.stores = b.stores[:1]
	got = lines("-ops get,delete -refs floor -env GOGC=50")
	want = []string{"postgres get floor c64", "postgres get service c64", "postgres delete floor c64", "postgres delete service c64"}
	if !slices.Equal(got, want) {
		t.Errorf("-refs floor:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b.peer = "" // -refs pgbench: not built
	got = lines("-ops create -refs pgbench")
	if want := []string{"postgres create pgbench c16", "postgres create service c64"}; !slices.Equal(got, want) {
		t.Errorf("-refs pgbench: %v, want %v", got, want)
	}
}

// A reference server has no graceful shutdown: ending on stop's SIGTERM is
// its clean exit, while the service must exit by itself.
func TestStopAcceptsSIGTERMFromAReferenceOnly(t *testing.T) {
	for _, untidy := range []bool{true, false} {
		s := &service{cmd: exec.Command("sleep", "60"), untidy: untidy}
		if err := s.start(context.Background(), t.TempDir(), func() bool { return true }); err != nil {
			t.Fatal(err)
		}
		if err := s.stop(); (err == nil) != untidy {
			t.Errorf("untidy %v: stop = %v", untidy, err)
		}
	}
}
