package pgcluster

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// HA is a Patroni cluster as deployments/patroni describes it: one etcd,
// three Patroni members each with its own PostgreSQL, synchronous and
// strict, HAProxy in front following the leader, and PgBouncer in front of
// HAProxy. Each member reaches etcd through a proxy of its own, so that a
// test can cut one member off from etcd alone.
type HA struct {
	Members []*Member

	dir        string
	bin        string // PostgreSQL's server programs
	patronictl string
	etcd       *daemon
	etcdAddr   string
	haproxy    *front
	pgbouncer  *front
	ports      []int // free, not yet used
}

// Member is one Patroni member and the PostgreSQL it manages.
type Member struct {
	Name    string
	Port    int // PostgreSQL's, on 127.0.0.1
	APIPort int // Patroni's REST API, on 127.0.0.1

	config  string // its patroni.yml
	data    string
	log     string
	proxy   *etcdProxy
	patroni *daemon
	lost    bool // its machine lost (LoseLeader): its Patroni is not expected to run
}

// StartHA starts the cluster and returns once it is whole: a leader, a
// synchronous standby, every member running, and HAProxy and PgBouncer
// leading to the leader. Everything is killed and its files removed when the
// test ends: killed, not stopped, since stopping Patroni takes seconds and
// the files are thrown away anyway.
func StartHA(t testing.TB) *HA {
	t.Helper()
	h := &HA{}
	h.bin = filepath.Dir(Program(t, "initdb", PostgresBin))
	patroni := Program(t, "patroni")
	h.patronictl = Program(t, "patronictl")
	etcd := Program(t, "etcd")
	haproxy := Program(t, "haproxy", "/usr/sbin")
	pgbouncer := Program(t, "pgbouncer", "/usr/sbin")
	h.dir = Dir(t)
	h.ports = freePorts(t, 10)
	t.Cleanup(h.stop)
	started := time.Now()

	h.startEtcd(t, etcd)
	for i := range 3 {
		m := &Member{Name: "pg" + strconv.Itoa(i+1), Port: h.port(), APIPort: h.port()}
		m.config = filepath.Join(h.dir, m.Name+".yml")
		m.data = filepath.Join(h.dir, m.Name)
		m.log = filepath.Join(h.dir, m.Name+".log")
		m.proxy = startEtcdProxy(t, h.etcdAddr)
		h.Members = append(h.Members, m)
		render(t, "patroni.yml", m.config, patroniSettings{
			Name: m.Name, Host: "127.0.0.1", APIPort: m.APIPort, PGPort: m.Port,
			Etcd: m.proxy.addr, DataDir: m.data, BinDir: h.bin,
			PgPass: filepath.Join(h.dir, m.Name+".pgpass"), SocketDir: h.dir,
			Network: "127.0.0.1/32", AuthMethod: "trust", Fsync: "off",
		})
	}
	// All three at once: one wins the race to initialise the cluster, the
	// others wait for it and clone it, which is faster than one by one.
	for _, m := range h.Members {
		m.patroni = startDaemon(t, m.log, h.dir, true, patroni, m.config)
	}
	h.startHAProxy(t, haproxy)
	h.startPgBouncer(t, pgbouncer)
	h.waitWhole(t, 90*time.Second)
	t.Logf("Patroni cluster whole %s after start", time.Since(started).Round(time.Millisecond))
	return h
}

// freePorts returns n distinct TCP ports on 127.0.0.1 that nothing listens
// on now. They are held open until all are found: FreePort, called n times,
// may return a port twice, since each is free again once returned.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// port takes one of h's free ports.
func (h *HA) port() int {
	p := h.ports[0]
	h.ports = h.ports[1:]
	return p
}

// MultiHostURL is the libpq multi-host URL of database postgres listing
// every member, which connects only to the one that accepts writes and gives
// up on a dead host after two seconds: how the service reaches the leader
// without a proxy. The service rewrites this form into the query form that
// lib/pq reads (?host=...&port=...); lib/pq alone cannot read it.
func (h *HA) MultiHostURL() string {
	hosts := make([]string, len(h.Members))
	for i, m := range h.Members {
		hosts[i] = "127.0.0.1:" + strconv.Itoa(m.Port)
	}
	return "postgres://postgres@" + strings.Join(hosts, ",") +
		"/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2"
}

// HAProxyURL is the URL of database postgres through HAProxy, which leads to
// whichever member Patroni's health check finds the leader.
func (h *HA) HAProxyURL() string { return localURL(h.haproxy.port) }

// PgBouncerURL is the URL of database postgres through PgBouncer, in
// transaction mode, in front of HAProxy.
func (h *HA) PgBouncerURL() string { return localURL(h.pgbouncer.port) }

// URL is the URL of database postgres on m's PostgreSQL alone.
func (m *Member) URL() string { return localURL(m.Port) }

func localURL(port int) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", port)
}

// DB connects to m's PostgreSQL, closed when the test ends.
func (m *Member) DB(t testing.TB) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("postgres", m.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("%s: %v\n%s", m.Name, err, m.Log())
	}
	return db
}

// Log is the end of m's Patroni log (PostgreSQL's own output included), for
// failure messages.
func (m *Member) Log() string { return logTail(m.log, 25) }

// member is the member named name, or nil.
func (h *HA) member(name string) *Member {
	for _, m := range h.Members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// logs is the end of every log of the cluster, for failure messages.
func (h *HA) logs() string {
	var b strings.Builder
	for _, m := range h.Members {
		fmt.Fprintf(&b, "--- %s (Patroni, PostgreSQL on %d, API on %d):\n%s\n", m.Name, m.Port, m.APIPort, m.Log())
	}
	for _, d := range []*daemon{h.etcd, h.haproxy.daemonOrNil(), h.pgbouncer.daemonOrNil()} {
		if d != nil {
			fmt.Fprintf(&b, "--- %s:\n%s\n", filepath.Base(d.log), logTail(d.log, 10))
		}
	}
	return b.String()
}

// stop kills everything StartHA started, fronts first, then the members
// (Patroni, then whatever PostgreSQL it left running, which it started in a
// session of its own), then etcd, and waits for all of it.
func (h *HA) stop() {
	h.pgbouncer.daemonOrNil().kill()
	h.haproxy.daemonOrNil().kill()
	for _, m := range h.Members {
		m.patroni.kill()
	}
	killPostgresUnder(h.bin, h.dir)
	for _, m := range h.Members {
		m.proxy.close()
	}
	h.etcd.kill()
}
