package pgcluster

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemon is a long-running program the harness started (etcd, Patroni,
// HAProxy, PgBouncer), in a process group of its own so that what it runs
// in turn (pg_rewind, pg_basebackup) is killed with it, and with its output
// in a log file.
type daemon struct {
	log    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// startDaemon starts bin with args, its output in the file log, as the
// server user if asServerUser (which is then handed dir, see AsServerUser).
// The environment is the test's without PostgreSQL's, Patroni's and etcd's
// own variables: each of them overrides the configuration file (PGPASSWORD,
// for one, makes Patroni's replicas never clone).
func startDaemon(t testing.TB, log, dir string, asServerUser bool, bin string, args ...string) *daemon {
	t.Helper()
	d := &daemon{log: log, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	out, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	d.cmd.Stdout, d.cmd.Stderr = out, out
	d.cmd.Env = []string{"HOME=" + dir, "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH")}
	if asServerUser {
		AsServerUser(t, d.cmd, dir)
	}
	if d.cmd.SysProcAttr == nil {
		d.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	d.cmd.SysProcAttr.Setpgid = true
	if err := d.cmd.Start(); err != nil {
		_ = out.Close()
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() { _ = d.cmd.Wait(); _ = out.Close(); close(d.exited) }()
	return d
}

// running reports whether d has not exited.
func (d *daemon) running() bool {
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

// kill kills d's process group and waits for d. A nil d is one never
// started.
func (d *daemon) kill() {
	if d == nil {
		return
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	<-d.exited
}

// killPostgresUnder kills every process of PostgreSQL's programs (in bin)
// whose command line names a path under dir, and waits until they are gone.
// Patroni starts each PostgreSQL in a session of its own that outlives
// Patroni, so killing Patroni leaves it running; its command line names its
// data directory. A PostgreSQL that a Patroni was just starting when it was
// killed may appear a moment later, so the search is repeated until one
// finds nothing. Other programs that name the directory (a tail of its
// logs) are left alone.
func killPostgresUnder(bin, dir string) {
	if resolved, err := filepath.EvalSymlinks(bin); err == nil {
		bin = resolved // as /proc/PID/exe shows it
	}
	for range 20 {
		pids := processesUnder(bin, dir)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			killPostmaster(pid)
		}
		for _, pid := range pids {
			waitGone(pid, 10*time.Second)
		}
	}
}

// killPostmaster kills pid and its children at once, as Server.Kill does:
// stopped first so that it forks nothing more, then its children, which are
// each in a process group of their own, then itself.
func killPostmaster(pid int) {
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	for _, child := range childrenOf(pid) {
		_ = syscall.Kill(child, syscall.SIGKILL)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// processesUnder lists the running processes of a program in bin with an
// argument that names a path under dir.
func processesUnder(bin, dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || gone(pid) {
			continue
		}
		exe, err := os.Readlink("/proc/" + e.Name() + "/exe")
		if err != nil || filepath.Dir(exe) != bin {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, arg := range bytes.Split(cmdline, []byte{0}) {
			if a := string(arg); a == dir || strings.Contains(a, dir+"/") {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// gone reports whether pid has exited: no longer there, or a zombie waiting
// for its parent (init, for a PostgreSQL that Patroni started).
func gone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	fields := strings.Fields(string(rest))
	return len(fields) == 0 || fields[0] == "Z" || fields[0] == "X"
}

// waitGone polls until pid has exited, or until limit.
func waitGone(pid int, limit time.Duration) {
	for deadline := time.Now().Add(limit); !gone(pid) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
}

// logTail is the last n lines of the log at path, without the tracebacks
// Patroni's REST API logs when a health check closes its connection early:
// noise that would push the lines that matter out of a failure message.
func logTail(path string, n int) string {
	data, _ := os.ReadFile(path)
	var lines []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		if isTraceback(line) {
			continue
		}
		lines = append(lines, line)
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func isTraceback(line string) bool {
	for _, noise := range []string{"Traceback ", "  ", "ConnectionResetError", "BrokenPipeError", "During handling", "----------",
		"Exception occurred during processing", "Exception happened during processing"} {
		if strings.HasPrefix(line, noise) {
			return true
		}
	}
	return false
}
