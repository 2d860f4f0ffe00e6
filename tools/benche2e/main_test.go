package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	o, err := parseOptions(strings.Fields("-ops create,delete -conns 16,64 -rate 500 -pgbench-clients 16,32 -env GOGC=100 -variant fast:GOMAXPROCS=1,PLANTSTORE_BATCH_MAX_WAIT=0s -variant plain -duration 3s"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.ops, []string{"create", "delete"}) || !slices.Equal(o.conns, []int{16, 64}) ||
		!slices.Equal(o.sqliteConns, o.conns) || !slices.Equal(o.rates, []int{500}) || !slices.Equal(o.pgbenchClients, []int{16, 32}) {
		t.Errorf("lists: %+v", o)
	}
	if o.preload != 1_000_000 || o.duration != 3*time.Second || o.rounds != 3 {
		t.Errorf("preload %d, duration %s, rounds %d; want the delete default, 3s and 3", o.preload, o.duration, o.rounds)
	}
	if len(o.variants) != 2 || o.variants[0].label != "fast" || len(o.variants[0].env) != 2 || len(o.variants[1].env) != 0 {
		t.Errorf("variants: %+v", o.variants)
	}
	if o, _ := parseOptions([]string{"-ops", "create"}); o.preload != 0 || o.conns != nil || !slices.Equal(o.stores, []string{"postgres", "sqlite"}) {
		t.Errorf("creates alone: preload %d, conns %v, stores %v; want 0, each scenario's own, both", o.preload, o.conns, o.stores)
	}
	o, _ = parseOptions(nil)
	if want := []string{"create", "get", "get-not-modified", "get-refused", "list", "events", "list-tag", "change", "delete", "create+hook", "change+hook", "delete+hook", "lag", "deliver"}; !slices.Equal(o.ops, want) {
		t.Errorf("default ops %v, want %v", o.ops, want)
	}
	if !slices.Equal(o.refs, []string{"pgbench", "peer", "floor"}) || o.peerDir != "../shared/tools/peer" {
		t.Errorf("default refs %v from %s, want pgbench, peer and floor from ../shared/tools/peer", o.refs, o.peerDir)
	}
	if o, err := parseOptions(strings.Fields("-refs pgbench -peer-dir /src/peer -ops list-tag")); err != nil ||
		!slices.Equal(o.refs, []string{"pgbench"}) || o.peerDir != "/src/peer" || o.preload != 1_000_000 {
		t.Errorf("-refs pgbench -peer-dir /src/peer -ops list-tag: %v, refs %v, dir %s, preload %d", err, o.refs, o.peerDir, o.preload)
	}
	if o.lagRate != 2000 || o.lagDuration != 30*time.Second || o.lagDrain != 5*time.Second || o.deliverEvents != 60000 {
		t.Errorf("webhook defaults: lag %d/s for %s, drain %s, %d events", o.lagRate, o.lagDuration, o.lagDrain, o.deliverEvents)
	}
	for _, ops := range []string{"change+hook", "delete+hook"} {
		if o, err := parseOptions([]string{"-ops", ops}); err != nil || o.preload != 1_000_000 {
			t.Errorf("-ops %s: %v, preload %d; want the plants it writes preloaded", ops, err, o.preload)
		}
	}
	o, err = parseOptions(strings.Fields("-ops create+hook,lag,deliver -lag-rate 500 -lag-duration 3s -lag-drain 0s -deliver-events 5000"))
	if err != nil || o.preload != 0 || o.lagRate != 500 || o.lagDuration != 3*time.Second || o.lagDrain != 0 || o.deliverEvents != 5000 {
		t.Errorf("webhook flags: %v, %+v", err, o)
	}
}

func TestParseOptionsRefuses(t *testing.T) {
	for _, args := range []string{
		"-ops create,update", "-stores mysql", "-conns 0", "-rate x", "-env HOME=/", "-variant :GOGC=1",
		"-variant v:PATH=/", "-duration 10ms", "-ops list -preload 50", "-preload -1", "extra",
		"-ops create+hook,lags", "-refs pgbench,wrk", "-ops list-tag -preload 99", "-ops change+hook -preload 99", "-lag-rate 0", "-lag-duration 10ms", "-lag-drain -1s", "-deliver-events 4",
	} {
		if _, err := parseOptions(strings.Fields(args)); err == nil {
			t.Errorf("%s: accepted", args)
		}
	}
}
