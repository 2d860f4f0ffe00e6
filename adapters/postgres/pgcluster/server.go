package pgcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"
)

// configure writes the settings the servers need into s's postgresql.conf
// (the standby's copy came from the primary).
func (c *Cluster) configure(t testing.TB, s *Server, extra string) {
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
`, s.Port, c.dir, extra)
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
func (c *Cluster) run(t testing.TB, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	AsServerUser(t, cmd, c.dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// start starts s, killed when the test ends, and waits until it accepts
// connections.
func (c *Cluster) start(t testing.TB, s *Server) {
	t.Helper()
	s.cmd = exec.Command(filepath.Join(c.bin, "postgres"), "-D", s.data)
	logFile, err := os.Create(filepath.Join(c.dir, s.Name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	AsServerUser(t, s.cmd, c.dir)
	if s.cmd.SysProcAttr == nil {
		s.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	s.cmd.SysProcAttr.Setpgid = true
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", s.Name, err)
	}
	s.exited = make(chan struct{})
	go func() { _ = s.cmd.Wait(); _ = logFile.Close(); close(s.exited) }()
	t.Cleanup(s.Kill)
	// Listening is not enough: a server that is starting up refuses
	// connections until it is consistent.
	db, err := sqlx.Open("postgres", s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return db.PingContext(ctx) == nil
	}, 30*time.Second, 10*time.Millisecond, "%s does not accept connections on port %d:\n%s", s.Name, s.Port, c.Log(s))
}
