// Package pgcluster builds PostgreSQL servers for tests: a primary with a
// synchronous hot standby, made with PostgreSQL's own programs (initdb,
// pg_basebackup, pg_ctl) from the Debian packages, on free ports in a
// temporary directory, and torn down when the test ends; and the helpers
// that start such programs (PgBouncer too) as the server user. It is for
// tests only: the PostgreSQL store's scale-out suite and the service's
// failover test. No production code imports it (the repository's
// dependency test checks that).
//
// Without PostgreSQL's server programs the test is skipped with one line,
// unless CI=true, where it fails: a CI run must never pass by skipping.
package pgcluster

import (
	"bytes"
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
	_ "github.com/lib/pq" // the "postgres" driver
	"github.com/stretchr/testify/require"
)

// Server is one PostgreSQL server of a cluster, started as a child process
// group of its own, so that a test can kill it as a crash would.
type Server struct {
	Name string // primary or standby
	Port int    // on 127.0.0.1

	data   string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Cluster is a primary with a synchronous hot standby.
type Cluster struct {
	Primary, Standby *Server

	bin, dir string
}

// Start builds the primary with initdb, its standby with pg_basebackup,
// starts both, and waits until the standby is synchronous: from then on a
// commit is acknowledged only once the standby has it. Both servers are
// killed and their files removed when the test ends.
func Start(t testing.TB) *Cluster {
	t.Helper()
	c := &Cluster{dir: Dir(t)}
	c.bin = filepath.Dir(Program(t, "initdb", PostgresBin))
	c.Primary = &Server{Name: "primary", data: filepath.Join(c.dir, "primary"), Port: FreePort(t)}
	c.Standby = &Server{Name: "standby", data: filepath.Join(c.dir, "standby"), Port: FreePort(t)}
	c.run(t, "initdb", "-D", c.Primary.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	c.configure(t, c.Primary, "synchronous_standby_names = '*'")
	c.start(t, c.Primary)
	c.run(t, "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Primary.Port), "-U", "postgres",
		"-D", c.Standby.data, "-R", "-X", "stream", "--no-sync")
	// Promoted, the standby has no standby of its own to wait for; a
	// failover tool (pg_auto_failover) sets this on the new primary.
	c.configure(t, c.Standby, "synchronous_standby_names = ''")
	c.start(t, c.Standby)
	c.WaitSynchronous(t)
	return c
}

// WaitSynchronous waits until the standby streams from the primary as its
// synchronous standby: from then on a commit is acknowledged only once the
// standby has it.
func (c *Cluster) WaitSynchronous(t testing.TB) {
	t.Helper()
	primary := c.DB(t, c.Primary)
	require.Eventually(t, func() bool {
		var state string
		err := primary.Get(&state, "SELECT sync_state FROM pg_stat_replication LIMIT 1")
		return err == nil && state == "sync"
	}, 30*time.Second, 20*time.Millisecond, "the standby never became synchronous")
}

// URL is the multi-host URL of database postgres on the cluster, in
// libpq's authority form, primary first, that connects only to the server
// that accepts writes and gives up on a dead one after two seconds.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		c.Primary.Port, c.Standby.Port)
}

// URL is the URL of database postgres on s alone.
func (s *Server) URL() string { return s.URLOf("postgres") }

// URLOf is the URL of database db on s alone.
func (s *Server) URLOf(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// Kill kills s and every process of it at once, as a crash of its machine
// would, and waits for the postmaster to go. Killing the postmaster's
// process group is not enough: each child of the postmaster (a backend, the
// WAL receiver) makes itself a process group of its own, and would go on,
// committing or acknowledging WAL, until it noticed the postmaster's death.
// So the postmaster is stopped first, so that it forks nothing more, and
// its children are killed with it.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	pid := s.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	for _, child := range childrenOf(pid) {
		_ = syscall.Kill(child, syscall.SIGKILL)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-s.exited
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var children []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
		if fields := strings.Fields(rest); len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			children = append(children, child)
		}
	}
	return children
}

// Restart starts s again after Kill, on its files as the crash left them,
// and returns once it accepts connections.
func (c *Cluster) Restart(t testing.TB, s *Server) {
	t.Helper()
	c.start(t, s)
}

// Promote promotes the standby and returns once it accepts writes.
func (c *Cluster) Promote(t testing.TB) {
	t.Helper()
	c.run(t, "pg_ctl", "promote", "-w", "-D", c.Standby.data)
}

// DB connects to s, closed when the test ends.
func (c *Cluster) DB(t testing.TB, s *Server) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("postgres", s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("%s: %v\n%s", s.Name, err, c.Log(s))
	}
	return db
}

// Log is the end of s's log, for failure messages.
func (c *Cluster) Log(s *Server) string {
	data, _ := os.ReadFile(filepath.Join(c.dir, s.Name+".log"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}
