package scaleout

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"
)

// server is one PostgreSQL server of a cluster, started from Debian's
// programs as a child process group of its own, so that the test can kill
// it as a crash would.
type server struct {
	name, data string
	port       int
	cmd        *exec.Cmd
	exited     chan struct{}
}

// cluster is a primary with a synchronous hot standby, on free ports in a
// temporary directory, torn down when the test ends.
type cluster struct {
	bin, dir         string
	primary, standby *server
}

// startCluster builds the primary with initdb, its standby with
// pg_basebackup, starts both, and waits until the standby is synchronous:
// from then on a commit is acknowledged only once the standby has it.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{dir: serverDir(t)}
	c.bin = filepath.Dir(program(t, "initdb", postgresBin))
	c.primary = &server{name: "primary", data: filepath.Join(c.dir, "primary"), port: freePort(t)}
	c.standby = &server{name: "standby", data: filepath.Join(c.dir, "standby"), port: freePort(t)}
	c.run(t, "initdb", "-D", c.primary.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	c.configure(t, c.primary, "synchronous_standby_names = '*'")
	c.start(t, c.primary)
	c.run(t, "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(c.primary.port), "-U", "postgres",
		"-D", c.standby.data, "-R", "-X", "stream", "--no-sync")
	// Promoted, the standby has no standby of its own to wait for; a
	// failover tool (pg_auto_failover) sets this on the new primary.
	c.configure(t, c.standby, "synchronous_standby_names = ''")
	c.start(t, c.standby)
	primary := c.db(t, c.primary)
	require.Eventually(t, func() bool {
		var state string
		err := primary.Get(&state, "SELECT sync_state FROM pg_stat_replication LIMIT 1")
		return err == nil && state == "sync"
	}, 30*time.Second, 20*time.Millisecond, "the standby never became synchronous")
	return c
}

// configure writes the settings the tests need into a server's
// postgresql.conf (the standby's copy came from the primary).
func (c *cluster) configure(t *testing.T, s *server, extra string) {
	t.Helper()
	conf := fmt.Sprintf(`
port = %d
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
max_connections = 100
fsync = off
wal_level = replica
max_wal_senders = 4
hot_standby = on
%s
`, s.port, c.dir, extra)
	f, err := os.OpenFile(filepath.Join(s.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(conf); err != nil {
		t.Fatal(err)
	}
}

// run runs one of PostgreSQL's programs as the server user.
func (c *cluster) run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	asServerUser(t, cmd, c.dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// start starts s and waits until it accepts connections.
func (c *cluster) start(t *testing.T, s *server) {
	t.Helper()
	s.cmd = exec.Command(filepath.Join(c.bin, "postgres"), "-D", s.data)
	logFile, err := os.Create(filepath.Join(c.dir, s.name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	asServerUser(t, s.cmd, c.dir)
	if s.cmd.SysProcAttr == nil {
		s.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	s.cmd.SysProcAttr.Setpgid = true
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", s.name, err)
	}
	s.exited = make(chan struct{})
	go func() { _ = s.cmd.Wait(); _ = logFile.Close(); close(s.exited) }()
	t.Cleanup(func() { c.kill(s) })
	// Listening is not enough: a server that is starting up refuses
	// connections until it is consistent.
	db, err := sqlx.Open("postgres", s.url())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return db.PingContext(ctx) == nil
	}, 30*time.Second, 10*time.Millisecond, "%s does not accept connections on port %d:\n%s", s.name, s.port, c.log(s))
}

// kill kills s and every process of its group at once, as a crash of its
// machine would, and waits for the postmaster to go.
func (c *cluster) kill(s *server) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}

// promote promotes the standby and returns once it accepts writes.
func (c *cluster) promote(t *testing.T) {
	t.Helper()
	c.run(t, "pg_ctl", "promote", "-w", "-D", c.standby.data)
}

// url is the URL of database postgres on s.
func (s *server) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// db connects to s, closed when the test ends.
func (c *cluster) db(t *testing.T, s *server) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("postgres", s.url())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("%s: %v\n%s", s.name, err, c.log(s))
	}
	return db
}

// log is the end of s's log, for failure messages.
func (c *cluster) log(s *server) string {
	data, _ := os.ReadFile(filepath.Join(c.dir, s.name+".log"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}
