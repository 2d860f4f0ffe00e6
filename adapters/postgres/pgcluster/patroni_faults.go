package pgcluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The faults below each return once the fault is in place, not once the
// cluster has recovered from it: the test measures the recovery, and waits
// for it with WaitHealthy.

// KillLeader kills the leader's PostgreSQL and every process of it at once,
// as a crash would, and waits for it to go. Its Patroni lives on; with
// primary_start_timeout 0 it gives the leader lock up at once instead of
// restarting the crashed primary, and the synchronous standby takes over.
func (h *HA) KillLeader(t testing.TB) {
	t.Helper()
	leader := h.Leader(t)
	pid := leader.postmaster(t)
	killPostmaster(pid)
	waitGone(pid, 10*time.Second)
	if !gone(pid) {
		t.Fatalf("%s's PostgreSQL (pid %d) survived SIGKILL", leader.Name, pid)
	}
}

// LoseLeader kills the leader's Patroni and its PostgreSQL at once, as the
// loss of its machine would: nothing starts the old primary again, its
// leader lock expires after ttl, and another member is promoted. Unlike
// KillLeader, the old primary cannot come back as the primary when no
// standby is fit to take over. The member stays lost; LoseLeader returns it.
func (h *HA) LoseLeader(t testing.TB) *Member {
	t.Helper()
	leader := h.Leader(t)
	pid := leader.postmaster(t)
	leader.lost = true
	leader.patroni.kill()
	killPostmaster(pid)
	waitGone(pid, 10*time.Second)
	if !gone(pid) {
		t.Fatalf("%s's PostgreSQL (pid %d) survived SIGKILL", leader.Name, pid)
	}
	return leader
}

// postmaster is the process id of m's running PostgreSQL, from its
// postmaster.pid, checked against the process's command line: the file
// outlives a crash, and its pid may be another process's by then.
func (m *Member) postmaster(t testing.TB) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(m.data, "postmaster.pid"))
	if err != nil {
		t.Fatalf("%s: %v\n%s", m.Name, err, m.Log())
	}
	pid, err := strconv.Atoi(strings.SplitN(string(data), "\n", 2)[0])
	if err != nil {
		t.Fatalf("%s: postmaster.pid: %v", m.Name, err)
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if !strings.Contains(string(cmdline), m.data) {
		t.Fatalf("%s: process %d is not its PostgreSQL", m.Name, pid)
	}
	return pid
}

// Switchover hands the leadership over to the synchronous standby with
// patronictl, as an operator does before maintenance; it returns once
// patronictl reports the switchover done.
func (h *HA) Switchover(t testing.TB) {
	t.Helper()
	leader := h.Leader(t)
	st, err := h.dcs()
	if err != nil {
		t.Fatal(err)
	}
	out := h.patronictlRun(t, "switchover", "--leader", leader.Name, "--candidate", st.syncStandby, "--force")
	if !strings.Contains(out, "Successfully switched over") {
		t.Fatalf("patronictl switchover:\n%s\n%s", out, h.Logs())
	}
}

// CutLeaderOffEtcd closes the leader's connections to etcd and refuses its
// new ones, as a partition would; restore lets it reach etcd again. Cut off,
// the leader cannot renew its lock: Patroni demotes it after retry_timeout,
// and once the lock has expired (ttl) the synchronous standby takes over.
func (h *HA) CutLeaderOffEtcd(t testing.TB) (restore func()) {
	t.Helper()
	leader := h.Leader(t)
	leader.proxy.setCut(true)
	return func() { leader.proxy.setCut(false) }
}

// SetStrict turns synchronous_mode_strict on or off in the cluster's
// configuration in etcd, by Patroni's REST API (PATCH /config, what
// patronictl edit-config does, without patronictl's seconds of start-up),
// and returns once etcd holds it; each member applies it at its next loop
// (loop_wait, 1 s). Not strict, a leader with no synchronous standby left
// accepts writes that no standby has.
func (h *HA) SetStrict(t testing.TB, strict bool) {
	t.Helper()
	body := fmt.Sprintf(`{"synchronous_mode_strict": %t}`, strict)
	h.waitFor(t, 10*time.Second, "synchronous_mode_strict not set", func() error {
		m := h.reachingEtcd()
		req, err := http.NewRequest(http.MethodPatch, fmt.Sprintf("http://127.0.0.1:%d/config", m.APIPort), strings.NewReader(body))
		if err != nil {
			return err
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("PATCH /config on %s: %s", m.Name, resp.Status)
		}
		st, err := h.dcs()
		if err != nil {
			return err
		}
		if st.strict != strict {
			return fmt.Errorf("synchronous_mode_strict is %t in etcd", st.strict)
		}
		return nil
	})
}

// reachingEtcd is a member that is not cut off from etcd.
func (h *HA) reachingEtcd() *Member {
	for _, m := range h.Members {
		if !m.proxy.isCut() {
			return m
		}
	}
	return h.Members[0]
}

// patronictlRun runs patronictl with the configuration of a member that
// reaches etcd, fails the test if it fails, and returns its output.
func (h *HA) patronictlRun(t testing.TB, args ...string) string {
	t.Helper()
	config := h.reachingEtcd().config
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.patronictl, append([]string{"-c", config}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("patronictl %s: %v\n%s\n%s", strings.Join(args, " "), err, out, h.Logs())
	}
	return string(out)
}

// StopStandbys stops, with SIGSTOP, the WAL receiver of every member but
// the leader: from then on no standby receives or confirms a commit, and in
// strict synchronous mode every commit on the leader waits. Each standby
// still counts as streaming, to the leader (until wal_sender_timeout) and
// so to Patroni, whose synchronous standby keeps its place and may be
// promoted: a standby that lags unseen, as one behind a stalled link does.
// It returns the members it stopped.
func (h *HA) StopStandbys(t testing.TB) []*Member {
	t.Helper()
	leader := h.Leader(t)
	var stopped []*Member
	for _, m := range h.Members {
		if m == leader {
			continue
		}
		receiver := 0
		for _, child := range childrenOf(m.postmaster(t)) {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/cmdline")
			if strings.Contains(string(cmdline), "walreceiver") {
				receiver = child
			}
		}
		if receiver == 0 {
			t.Fatalf("%s has no WAL receiver\n%s", m.Name, h.Logs())
		}
		_ = syscall.Kill(receiver, syscall.SIGSTOP)
		stopped = append(stopped, m)
	}
	return stopped
}

// KillStopped kills the PostgreSQL of members that StopStandbys stopped,
// as a crash would, and each Patroni starts its PostgreSQL again from what
// is on its disk: what the leader committed since has never reached it.
func (h *HA) KillStopped(t testing.TB, members []*Member) {
	t.Helper()
	for _, m := range members {
		pid := m.postmaster(t)
		killPostmaster(pid)
		waitGone(pid, 10*time.Second)
	}
}
