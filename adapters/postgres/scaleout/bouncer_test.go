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

// bouncer is a PgBouncer in transaction mode in front of the test server.
type bouncer struct {
	port int
	log  string
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
	bin := pgcluster.Program(t, "pgbouncer", "/usr/sbin")
	pgtest.Admin(t) // skips, or fails under CI, without a server
	upstream, err := url.Parse(pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	dir := pgcluster.Dir(t)
	b := &bouncer{port: pgcluster.FreePort(t), log: filepath.Join(dir, "pgbouncer.log")}
	host, port := upstream.Hostname(), upstream.Port()
	if port == "" {
		port = "5432"
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
`, host, port, b.port, filepath.Join(dir, "users.txt"), poolSize, upstream.User.Username(), b.log, filepath.Join(dir, "pgbouncer.pid"))
	users := fmt.Sprintf("%q \"\"\n", upstream.User.Username())
	for name, text := range map[string]string{"pgbouncer.ini": ini, "users.txt": users} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
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
	}, 10*time.Second, 10*time.Millisecond, "pgbouncer does not listen on %s", addr)
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

// command runs one command of PgBouncer's admin console (PAUSE, RESUME,
// KILL db) as an operator would.
func (b *bouncer) command(t testing.TB, command string) {
	t.Helper()
	u, err := url.Parse(pgtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port))
	u.Path = "/pgbouncer"
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
