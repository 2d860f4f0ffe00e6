package main

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The configuration pools every database of the upstream server in
// transaction mode with the run's pool sizes and trust authentication, and
// keeps its files in the bouncer's directory.
func TestBouncerConfigPoolsTransactions(t *testing.T) {
	ini, err := bouncerConfig("127.0.0.1:5432", 6543, "/tmp/b")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"[databases]\n* = host=127.0.0.1 port=5432\n",
		"\nlisten_addr = 127.0.0.1\n", "\nlisten_port = 6543\n",
		"\npool_mode = transaction\n", "\ndefault_pool_size = 20\n", "\nmax_client_conn = 1000\n",
		"\nauth_type = trust\n", "\nauth_file = /tmp/b/users.txt\n",
		"\nlogfile = /tmp/b/pgbouncer.log\n", "\npidfile = /tmp/b/pgbouncer.pid\n",
	} {
		if !strings.Contains(ini, line) {
			t.Errorf("pgbouncer.ini lacks %q:\n%s", line, ini)
		}
	}
	// Stock settings otherwise: nothing lets the service send what
	// PgBouncer would refuse.
	if strings.Contains(ini, "ignore_startup_parameters") {
		t.Errorf("pgbouncer.ini sets ignore_startup_parameters:\n%s", ini)
	}
	if _, err := bouncerConfig("127.0.0.1", 1, "/tmp/b"); err == nil {
		t.Error("an upstream address without a port is accepted")
	}
}

// The pooled cell reaches the run's database through the bouncer, with the
// same user and parameters, and tells the service it talks to a
// transaction pooler; these come last so that they win over -env.
func TestBouncerEnvReachesTheRunsDatabaseThroughIt(t *testing.T) {
	b := &bouncer{addr: "127.0.0.1:6543"}
	direct := "postgres://postgres@127.0.0.1:5432/plantstore_bench_1?sslmode=disable"
	env := []string{"PLANTSTORE_DATABASE_URL=" + direct, "PLANTSTORE_DATABASE_POOLER=none"}
	got := b.env(env, direct)
	want := append(slices.Clone(env), "PLANTSTORE_DATABASE_URL=postgres://postgres@127.0.0.1:6543/plantstore_bench_1?sslmode=disable",
		"PLANTSTORE_DATABASE_POOLER=transaction")
	if !slices.Equal(got, want) {
		t.Errorf("env\n%q\nwant\n%q", got, want)
	}
	if env[1] != "PLANTSTORE_DATABASE_POOLER=none" || len(env) != 2 {
		t.Errorf("the direct cell's env changed: %q", env)
	}
	if upstreamAddr(&url.URL{Host: "db.internal"}) != "db.internal:5432" {
		t.Error("a URL without a port does not default to 5432")
	}
}

// With -pgbouncer every PostgreSQL service cell, open loops included, is
// followed by the same through PgBouncer; the references and the embedded
// store's cells are not doubled.
func TestPgBouncerDoublesThePostgreSQLServiceCells(t *testing.T) {
	b := &bench{bins: []string{"plantstore"}, bouncer: &bouncer{addr: "127.0.0.1:6543"},
		stores: []*store{{kind: "postgres", url: "postgres://postgres@127.0.0.1:5432/db"}, {kind: "sqlite", url: "sqlite:/tmp/p.db"}}}
	var err error
	if b.o, err = parseOptions([]string{"-ops", "create", "-rate", "500", "-pgbouncer", "-variant", "gc:GOGC=100"}); err != nil || !b.o.pgbouncer {
		t.Fatalf("parseOptions: pgbouncer %v, %v", b.o.pgbouncer, err)
	}
	var lines []string
	for _, c := range b.newCells() {
		line := c.store.kind + " " + c.load
		if slices.Contains(c.env, "PLANTSTORE_DATABASE_POOLER=transaction") {
			line += " → " + c.env[len(c.env)-2]
		}
		lines = append(lines, line)
	}
	const pooled = " → PLANTSTORE_DATABASE_URL=postgres://postgres@127.0.0.1:6543/db"
	want := []string{
		"postgres pgbench",
		"postgres service gc", "postgres service pgbouncer gc" + pooled,
		"postgres service open 500/s gc", "postgres service pgbouncer open 500/s gc" + pooled,
		"sqlite Go loop",
		"sqlite service gc",
		"sqlite service open 500/s gc",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("cells:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
