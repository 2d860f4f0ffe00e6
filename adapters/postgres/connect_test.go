package postgres

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// closedPort returns a local port with nothing listening on it.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestOpenGivesUpOnAnUnreachableDatabaseWithOneLine(t *testing.T) {
	addr := closedPort(t)
	_, err := Open(context.Background(), Config{
		URL:            "postgres://plants:s3cr%40t@" + addr + "/plants?sslmode=disable",
		ConnectTimeout: 300 * time.Millisecond,
	})
	if err == nil {
		t.Fatal("Open succeeded on a closed port")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "database unreachable at "+addr+" after ") || !strings.HasSuffix(msg, ": connection refused") {
		t.Errorf("error = %q; want `database unreachable at %s after <time>: connection refused`", msg, addr)
	}
	if strings.Contains(msg, "s3cr") || strings.Contains(msg, "\n") {
		t.Errorf("error %q shows the password or spans lines", msg)
	}
}

func TestOpenStopsAtOnceWhenTheDatabaseSaysNo(t *testing.T) {
	u, err := url.Parse(pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	pgtest.Admin(t) // skips when there is no server
	u.Path = "/plantstore_no_such_database"
	_, err = Open(context.Background(), Config{URL: u.String(), ConnectTimeout: time.Hour})
	if err == nil || !strings.Contains(err.Error(), "refused the connection") {
		t.Fatalf("Open on a missing database = %v; want a refusal", err)
	}
}

func TestOpenNeverShowsThePasswordOfABadURL(t *testing.T) {
	_, err := Open(context.Background(), Config{URL: "postgres://plants:hunter2@db.example:notaport/plants"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Open with a bad URL = %v; want an error without the password", err)
	}
}

func TestTarget(t *testing.T) {
	cases := map[string]string{
		"postgres://u:p@db.example:6543/x":     "db.example:6543",
		"postgresql://db.example/x":            "db.example:5432",
		"postgres:///x?host=/tmp":              "/tmp:5432",
		"postgres:///x":                        "localhost:5432",
		"host=10.0.0.1 port=5433 password=p x": "10.0.0.1:5433",
		"postgres://u@[::1]:5432/x":            "[::1]:5432",
		"postgres://u:p@a:5432,b:5433/x":       "a:5432,b:5433",
		"postgres:///x?host=a,b&port=1,2":      "a:1,b:2",
	}
	for raw, want := range cases {
		if got := target(raw); got != want {
			t.Errorf("target(%q) = %q; want %q", raw, got, want)
		}
	}
}

// The store's sessions run without JIT compilation, the outbox's also
// without waiting for the disk and with the due index preferred, and a URL's
// own options still apply to both.
func TestSessionsRunWithTheStoresSettingsAndTheURLsOptions(t *testing.T) {
	first, raw := newStore(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	// Whatever the server's default, the database asks for JIT.
	if _, err := first.db.Exec(`ALTER DATABASE ` + pq.QuoteIdentifier(strings.TrimPrefix(u.Path, "/")) + ` SET jit = on`); err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("options", "-c application_name=plants-test")
	u.RawQuery = q.Encode()
	s := openStore(t, u.String())
	outbox, err := s.outboxDB()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pool *sqlx.DB
		want map[string]string
	}{
		{s.db, map[string]string{"jit": "off", "synchronous_commit": "on", "enable_seqscan": "on", "application_name": "plants-test"}},
		{outbox, map[string]string{"jit": "off", "synchronous_commit": "off", "enable_seqscan": "off", "application_name": "plants-test"}},
	} {
		for name, want := range c.want {
			var got string
			if err := c.pool.Get(&got, "SELECT current_setting($1)", name); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
	}
}
