package scaleout

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres/pgcluster"
	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// bouncer is a PgBouncer in transaction mode in front of a test server.
type bouncer struct {
	port     int
	log      string
	dir      string
	poolSize int
	user     string // of the server, and the console's admin
}

// startBouncer starts PgBouncer from the Debian package in transaction mode
// with a server pool of poolSize per database and user, in front of the
// server pgtest uses, and stops it when the test ends. Its settings are the
// stock ones apart from the pool mode, the pool sizes, authentication, an
// admin user for its console, and server_login_retry, which
// docs/operations.md tells operators to lower: stock, PgBouncer waits 15 s
// before it logs in to a server again after KILL. No
// ignore_startup_parameters, since the store sends none that PgBouncer
// refuses.
func startBouncer(t testing.TB, poolSize int) *bouncer {
	t.Helper()
	pgtest.Admin(t) // skips, or fails under CI, without a server
	upstream, err := url.Parse(pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	port := upstream.Port()
	if port == "" {
		port = "5432"
	}
	return startBouncerTo(t, poolSize, net.JoinHostPort(upstream.Hostname(), port), upstream.User.Username())
}

// startBouncerTo starts PgBouncer as startBouncer does, in front of the
// server at upstream (host:port), logging in as user.
func startBouncerTo(t testing.TB, poolSize int, upstream, user string) *bouncer {
	t.Helper()
	bin := pgcluster.Program(t, "pgbouncer", "/usr/sbin")
	dir := pgcluster.Dir(t)
	b := &bouncer{port: pgcluster.FreePort(t), log: filepath.Join(dir, "pgbouncer.log"), dir: dir, poolSize: poolSize, user: user}
	b.configure(t, upstream)
	users := fmt.Sprintf("%q \"\"\n", user)
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(users), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	pgcluster.AsServerUser(t, cmd, dir)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pgbouncer: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM) // immediate shutdown
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port))
	require.Eventually(t, func() bool {
		select {
		case err := <-exited:
			exited <- err
			return true
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, time.Minute, 10*time.Millisecond, "pgbouncer does not listen on %s", addr)
	select {
	case err := <-exited:
		t.Fatalf("pgbouncer exited: %v\n%s", err, b.logTail())
	default:
	}
	return b
}

// url returns the URL of the database that databaseURL (one of pgtest's)
// names, through the bouncer.
func (b *bouncer) url(t testing.TB, databaseURL string) string {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port))
	return u.String()
}

// configure writes PgBouncer's settings, with every database on the server
// at upstream (host:port).
func (b *bouncer) configure(t testing.TB, upstream string) {
	t.Helper()
	host, port, err := net.SplitHostPort(upstream)
	if err != nil {
		t.Fatal(err)
	}
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 1000
admin_users = %s
server_login_retry = 1
logfile = %s
pidfile = %s
`, host, port, b.port, filepath.Join(b.dir, "users.txt"), b.poolSize, b.user, b.log, filepath.Join(b.dir, "pgbouncer.pid"))
	if err := os.WriteFile(filepath.Join(b.dir, "pgbouncer.ini"), []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
}

// repoint points PgBouncer at the server at upstream, as an operator or a
// failover tool's hook does after a promotion: PgBouncer has no failover of
// its own. It rewrites the settings and has PgBouncer reload them; PgBouncer
// then logs in to the new server for its next server sessions.
func (b *bouncer) repoint(t testing.TB, upstream string) {
	t.Helper()
	b.configure(t, upstream)
	b.command(t, "RELOAD")
}

// command runs one command of PgBouncer's admin console (PAUSE, RESUME,
// KILL db) as an operator would.
func (b *bouncer) command(t testing.TB, command string) {
	t.Helper()
	u := url.URL{Scheme: "postgres", User: url.User(b.user), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port)),
		Path: "/pgbouncer", RawQuery: "sslmode=disable"}
	db, err := sql.Open("postgres", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, command); err != nil {
		t.Fatalf("pgbouncer %s: %v\n%s", command, err, b.logTail())
	}
}

// logTail is the end of PgBouncer's log, for failure messages.
func (b *bouncer) logTail() string {
	data, _ := os.ReadFile(b.log)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}
