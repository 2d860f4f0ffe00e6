package postgres

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// Both multi-host forms reach lib/pq as its query form; URLs with one host
// pass unchanged.
func TestHostList(t *testing.T) {
	cases := map[string]string{
		"postgres://app:pw@a:5432,b:5433/plants?target_session_attrs=read-write": "postgres://app:pw@/plants?host=a%2Cb&port=5432%2C5433&target_session_attrs=read-write",
		"postgresql://a,b:6000/plants":                                           "postgresql:///plants?host=a%2Cb&port=5432%2C6000",
		"postgres://app@[::1]:5432,[2001:db8::2]/plants?sslmode=disable":         "postgres://app@/plants?host=%3A%3A1%2C2001%3Adb8%3A%3A2&port=5432%2C5432&sslmode=disable",
		"postgres://a:1,b:2":               "postgres:///?host=a%2Cb&port=1%2C2",
		"postgres://app:pw@db:5432/plants": "postgres://app:pw@db:5432/plants",
		"postgres:///plants?host=a,b&port=1,2&target_session_attrs=read-write": "postgres:///plants?host=a,b&port=1,2&target_session_attrs=read-write",
		"host=a,b port=1,2 dbname=plants":                                      "host=a,b port=1,2 dbname=plants",
	}
	for raw, want := range cases {
		got, err := hostList(raw)
		if err != nil || got != want {
			t.Errorf("hostList(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, bad := range []string{"postgres://a:1,,b:2/x", "postgres://a:1,b:2/x?host=c", "postgres://a:x:1,b/x"} {
		if got, err := hostList(bad); err == nil {
			t.Errorf("hostList(%q) = %q; want an error", bad, got)
		}
	}
}

// A store opens on the first host of a multi-host URL that answers as a
// primary, in either form; here the first host is down.
func TestOpenOnAMultiHostURL(t *testing.T) {
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	_ = l.Close()
	host, port, _ := net.SplitHostPort(u.Host)
	downHost, downPort, _ := net.SplitHostPort(down)
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	authority := *u
	authority.Host = down + "," + u.Host
	authority.RawQuery = q.Encode()
	query := *u
	query.Host = ""
	q.Set("host", downHost+","+host)
	q.Set("port", downPort+","+port)
	query.RawQuery = q.Encode()
	for i, raw := range []string{authority.String(), query.String()} {
		s := openStore(t, raw)
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatalf("%s: Migrate: %v", raw, err)
		}
		if _, _, err := s.InsertIfAbsent(context.Background(), record(t, int64(i), "Fern", "")); err != nil {
			t.Errorf("%s: InsertIfAbsent: %v", raw, err)
		}
		if got, want := s.target, down+","+u.Host; got != want {
			t.Errorf("%s: target %q; want %q", raw, got, want)
		}
	}
}

// A login is given the query timeout, a second at least, and with several
// hosts each one's connect_timeout: lib/pq tries them in turn, and a host
// that never answers, listed first, must not use the whole login up.
func TestALoginHasTimeForEveryHost(t *testing.T) {
	for _, c := range []struct {
		url  string
		want time.Duration
	}{
		{"postgres://u@a/db", 5 * time.Second},
		{"postgres://u@a/db?connect_timeout=9", 5 * time.Second},
		{"postgres://u@a:5432,b:5433,c:5434/db?connect_timeout=2", 7 * time.Second},
		{"postgres://u@a:5432,b:5433/db", 5 * time.Second},
		{"postgres://u@a:5432,b:5433/db?connect_timeout=1", 5 * time.Second},
	} {
		if got := loginBound(c.url, 5*time.Second); got != c.want {
			t.Errorf("loginBound(%q, 5s) = %s; want %s", c.url, got, c.want)
		}
	}
	if got := loginBound("postgres://u@a/db", 10*time.Millisecond); got != minLoginTimeout {
		t.Errorf("loginBound with a query timeout of 10ms = %s; want %s", got, minLoginTimeout)
	}
}
