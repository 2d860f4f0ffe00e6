package pgcluster

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// dcsState is what Patroni keeps in etcd about the cluster: the leader lock,
// the synchronous standby it chose, the configuration, and each member's own
// report. It is
// what patronictl list and GET /cluster show, read from etcd itself: that
// neither loads the Python processes on a small machine nor depends on the
// member a fault has cut off.
type dcsState struct {
	leader      string
	syncStandby string
	strict      bool // synchronous_mode_strict, in the configuration
	members     map[string]memberReport
}

// memberReport is a member's key: its PostgreSQL's state (running,
// starting, stopped, creating replica...), role and timeline.
type memberReport struct {
	State    string `json:"state"`
	Role     string `json:"role"` // master (or primary) or replica
	Timeline int    `json:"timeline"`
}

// dcs reads the cluster's keys from etcd with its JSON gateway.
func (h *HA) dcs() (dcsState, error) {
	const prefix = "/service/plantstore/"
	query, _ := json.Marshal(map[string]string{
		"key":       base64.StdEncoding.EncodeToString([]byte(prefix)),
		"range_end": base64.StdEncoding.EncodeToString([]byte(prefix[:len(prefix)-1] + "0")),
	})
	httpc := &http.Client{Timeout: 2 * time.Second}
	resp, err := httpc.Post("http://"+h.etcdAddr+"/v3/kv/range", "application/json", bytes.NewReader(query))
	if err != nil {
		return dcsState{}, err
	}
	defer resp.Body.Close()
	var body struct {
		KVs []struct{ Key, Value []byte } `json:"kvs"` // base64 in JSON
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return dcsState{}, fmt.Errorf("etcd: %w", err)
	}
	st := dcsState{members: map[string]memberReport{}}
	for _, kv := range body.KVs {
		key := string(kv.Key[len(prefix):])
		switch {
		case key == "leader":
			st.leader = string(kv.Value)
		case key == "sync":
			var sync struct {
				SyncStandby string `json:"sync_standby"`
			}
			_ = json.Unmarshal(kv.Value, &sync)
			st.syncStandby = sync.SyncStandby
		case key == "config":
			var config struct {
				Strict bool `json:"synchronous_mode_strict"`
			}
			_ = json.Unmarshal(kv.Value, &config)
			st.strict = config.Strict
		case strings.HasPrefix(key, "members/"):
			var r memberReport
			_ = json.Unmarshal(kv.Value, &r)
			st.members[strings.TrimPrefix(key, "members/")] = r
		}
	}
	return st, nil
}

// leads reports whether name holds the leader lock and its PostgreSQL runs
// as the primary.
func (st dcsState) leads(name string) bool {
	r, ok := st.members[name]
	return ok && st.leader == name && r.State == "running" && (r.Role == "master" || r.Role == "primary")
}

// Leader is the member that leads now: it holds the leader lock and its
// PostgreSQL runs as the primary. It waits up to 30 s for there to be one.
func (h *HA) Leader(t testing.TB) *Member {
	t.Helper()
	var leader *Member
	h.waitFor(t, 30*time.Second, "no member leads", func() error {
		st, err := h.dcs()
		if err != nil {
			return err
		}
		if !st.leads(st.leader) {
			return fmt.Errorf("the leader lock names %q, which does not run as the primary", st.leader)
		}
		leader = h.member(st.leader)
		return nil
	})
	return leader
}

// WaitWritable waits until a member other than old leads with a synchronous
// standby streaming from it, which strict synchronous mode needs before a
// commit returns, and returns it: from then on the cluster acknowledges
// writes, and what a client still waits for is its own doing.
func (h *HA) WaitWritable(t testing.TB, old *Member) *Member {
	t.Helper()
	var leader *Member
	h.waitFor(t, 60*time.Second, "no new leader with a synchronous standby", func() error {
		st, err := h.dcs()
		if err != nil {
			return err
		}
		if !st.leads(st.leader) || st.leader == old.Name {
			return fmt.Errorf("the leader lock names %q", st.leader)
		}
		if st.syncStandby == "" || st.syncStandby == st.leader {
			return errors.New("no synchronous standby")
		}
		leader = h.member(st.leader)
		return standbysOf(leader, st.syncStandby, -1)
	})
	return leader
}

// WaitHealthy waits until the cluster is whole again after a fault, and
// logs how long that took: a leader and a synchronous standby, every member
// running and streaming from the leader (an old leader rewound and rejoined
// as a replica), and HAProxy and PgBouncer leading to the leader.
func (h *HA) WaitHealthy(t testing.TB) {
	t.Helper()
	start := time.Now()
	h.waitWhole(t, 60*time.Second)
	t.Logf("Patroni cluster whole again in %s", time.Since(start).Round(time.Millisecond))
}

func (h *HA) waitWhole(t testing.TB, limit time.Duration) {
	t.Helper()
	h.waitFor(t, limit, "the Patroni cluster is not whole", h.whole)
}

// whole says what keeps the cluster from being whole, or nil.
func (h *HA) whole() error {
	st, err := h.dcs()
	if err != nil {
		return err
	}
	if !st.leads(st.leader) {
		return fmt.Errorf("no member leads (lock: %q)", st.leader)
	}
	if st.syncStandby == "" || st.syncStandby == st.leader {
		return errors.New("no synchronous standby")
	}
	for _, m := range h.Members {
		if r := st.members[m.Name]; r.State != "running" && r.State != "streaming" {
			return fmt.Errorf("%s is %q", m.Name, r.State)
		}
	}
	leader := h.member(st.leader)
	if err := standbysOf(leader, st.syncStandby, len(h.Members)-1); err != nil {
		return err
	}
	for _, via := range []struct{ name, url string }{{"HAProxy", h.HAProxyURL()}, {"PgBouncer", h.PgBouncerURL()}} {
		if err := leadsTo(via.url, leader); err != nil {
			return fmt.Errorf("%s: %w", via.name, err)
		}
	}
	return nil
}

// standbysOf checks, on the leader itself, that n standbys stream from it
// (any number for n < 0) and that sync, the one Patroni chose, is
// synchronous.
func standbysOf(leader *Member, sync string, n int) error {
	return query(leader.URL(), func(db *sql.DB, ctx context.Context) error {
		rows, err := db.QueryContext(ctx, "SELECT application_name, state, sync_state FROM pg_stat_replication")
		if err != nil {
			return err
		}
		defer rows.Close()
		var streaming []string
		synchronous := false
		for rows.Next() {
			var name, state, syncState string
			if err := rows.Scan(&name, &state, &syncState); err != nil {
				return err
			}
			if state == "streaming" {
				streaming = append(streaming, name)
			}
			synchronous = synchronous || (name == sync && syncState == "sync")
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if (n >= 0 && len(streaming) != n) || !synchronous {
			return fmt.Errorf("on %s, streaming: %v; %s synchronous: %t", leader.Name, streaming, sync, synchronous)
		}
		return nil
	})
}

// leadsTo checks that a new connection to url reaches leader's PostgreSQL,
// out of recovery.
func leadsTo(url string, leader *Member) error {
	return query(url, func(db *sql.DB, ctx context.Context) error {
		var port int
		var recovering bool
		if err := db.QueryRowContext(ctx, "SELECT inet_server_port(), pg_is_in_recovery()").Scan(&port, &recovering); err != nil {
			return err
		}
		if port != leader.Port || recovering {
			return fmt.Errorf("leads to the server on port %d (in recovery: %t), not to %s on %d", port, recovering, leader.Name, leader.Port)
		}
		return nil
	})
}

// query runs f on a new connection to url, with a short deadline, so that
// nothing pooled from before a fault answers.
func query(url string, f func(*sql.DB, context.Context) error) error {
	db, err := sql.Open("postgres", url)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return f(db, ctx)
}

// waitFor polls check until it answers nil, or fails the test after limit
// with check's last answer, patronictl list and every log's tail; at once if
// a program of the cluster has exited, which nothing here restarts.
func (h *HA) waitFor(t testing.TB, limit time.Duration, what string, check func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err = h.exited(); err != nil {
			break
		}
		if err = check(); err == nil {
			return
		}
	}
	t.Fatalf("%s after %s: %v\n%s", what, limit, err, h.Logs())
}

// exited names a program of the cluster that has exited, if one has.
func (h *HA) exited() error {
	daemons := map[string]*daemon{"etcd": h.etcd, "HAProxy": h.haproxy.daemonOrNil(), "PgBouncer": h.pgbouncer.daemonOrNil()}
	for _, m := range h.Members {
		if m.lost {
			continue
		}
		daemons[m.Name+"'s Patroni"] = m.patroni
	}
	for name, d := range daemons {
		if d != nil && !d.running() {
			return fmt.Errorf("%s has exited", name)
		}
	}
	return nil
}

// Logs is patronictl list's table and the end of every log of the cluster,
// for failure messages.
func (h *HA) Logs() string { return h.list() + h.logs() }

// list is patronictl list's table.
func (h *HA) list() string {
	if len(h.Members) == 0 {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, h.patronictl, "-c", h.reachingEtcd().config, "list").CombinedOutput()
	return string(out)
}
