package pgcluster

import (
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
)

// Program returns the path of a server program, looked up in dirs (glob
// patterns) and then on PATH: Debian keeps PostgreSQL's server programs off
// PATH, in PostgresBin. Without it the test is skipped with one line, or
// fails under CI=true.
func Program(t testing.TB, name string, dirs ...string) string {
	t.Helper()
	for _, dir := range dirs {
		matches, _ := filepath.Glob(filepath.Join(dir, name))
		sort.Sort(sort.Reverse(sort.StringSlice(matches))) // the newest version first
		if len(matches) > 0 {
			return matches[0]
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := name + " is not installed (Debian: apt-get install " + debianPackage[name] + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

var debianPackage = map[string]string{
	"pgbouncer":     "pgbouncer",
	"initdb":        "postgresql",
	"pg_basebackup": "postgresql",
	"pg_ctl":        "postgresql",
	"postgres":      "postgresql",
	"patroni":       "patroni",
	"patronictl":    "patroni",
	"etcd":          "etcd-server",
	"haproxy":       "haproxy",
}

// PostgresBin is where Debian keeps PostgreSQL's server programs.
const PostgresBin = "/usr/lib/postgresql/*/bin"

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Dir returns an empty directory for a server's files, removed when the
// test ends. It is made directly in the system's temporary directory: a
// server that runs as another user (AsServerUser) could not reach one made
// by t.TempDir, whose parent only the test's user may enter.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "plantstore-pgcluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// AsServerUser makes cmd run as the postgres user when the tests run as
// root, which PostgreSQL and PgBouncer both refuse, and hands it dir and the
// files in it.
func AsServerUser(t testing.TB, cmd *exec.Cmd, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root, and no postgres user to run the servers as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	// The directory and the files the test wrote into it; what the servers
	// write below it is theirs already, and may vanish while this runs.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{dir}
	for _, e := range entries {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	for _, path := range paths {
		if err := os.Lchown(path, uid, gid); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
}
