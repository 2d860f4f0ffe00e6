package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pgbouncerBin is where Debian installs PgBouncer, off PATH for most users.
const pgbouncerBin = "/usr/sbin/pgbouncer"

// Pool sizes of the run's PgBouncer: a server pool per database and user of
// 20 sessions, as docs/operations.md recommends, shared by every connection
// the service opens; room for far more clients than one service opens.
const (
	bouncerPoolSize  = 20
	bouncerMaxClient = 1000
)

// bouncer is the PgBouncer in transaction mode a run starts with -pgbouncer,
// between the service's "service pgbouncer" cells and PostgreSQL.
type bouncer struct {
	cmd    *exec.Cmd
	addr   string // host:port it listens on
	dir    string // its configuration, log and pid file
	exited chan struct{}
	err    error // the exit error, once exited is closed
}

// bouncerConfig renders pgbouncer.ini: every database of the upstream server
// (host:port), transaction pooling, stock settings otherwise apart from the
// pool sizes and trust authentication, which the local test server uses.
func bouncerConfig(upstream string, listenPort int, dir string) (string, error) {
	host, port, err := net.SplitHostPort(upstream)
	if err != nil {
		return "", fmt.Errorf("PostgreSQL's address %q: %w", upstream, err)
	}
	return fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = %d
logfile = %s
pidfile = %s
`, host, port, listenPort, filepath.Join(dir, "users.txt"), bouncerPoolSize, bouncerMaxClient,
		filepath.Join(dir, "pgbouncer.log"), filepath.Join(dir, "pgbouncer.pid")), nil
}

// upstreamAddr is the host:port of a PostgreSQL URL, 5432 when it names none.
func upstreamAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// startBouncer starts PgBouncer in front of the server of pgURL, in a
// directory of its own (as the postgres user when this runs as root, which
// PgBouncer refuses), and waits until it listens.
func startBouncer(ctx context.Context, pgURL string) (_ *bouncer, err error) {
	if _, err := os.Stat(pgbouncerBin); err != nil {
		return nil, fmt.Errorf("-pgbouncer needs %s: install PgBouncer (apt-get install pgbouncer)", pgbouncerBin)
	}
	u, err := url.Parse(pgURL)
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	// Its own directory in the system's temporary one: the run's scratch
	// directory is the run user's alone, and PgBouncer may run as another.
	dir, err := os.MkdirTemp("", "plantstore-bench-pgbouncer-")
	if err != nil {
		return nil, err
	}
	b := &bouncer{addr: addr, dir: dir, exited: make(chan struct{})}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	ini, err := bouncerConfig(upstreamAddr(u), port, dir)
	if err != nil {
		return nil, err
	}
	users := fmt.Sprintf("%q \"\"\n", u.User.Username())
	for name, text := range map[string]string{"pgbouncer.ini": ini, "users.txt": users} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	b.cmd = exec.Command(pgbouncerBin, filepath.Join(dir, "pgbouncer.ini"))
	if err := asPostgresUser(b.cmd, dir); err != nil {
		return nil, err
	}
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pgbouncer: %w", err)
	}
	go func() { b.err = b.cmd.Wait(); close(b.exited) }()
	ready, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			progress("PgBouncer in transaction mode on %s (server pool %d)", addr, bouncerPoolSize)
			return b, nil
		}
		select {
		case <-ready.Done():
		case <-b.exited:
		case <-time.After(20 * time.Millisecond):
			continue
		}
		err := fmt.Errorf("pgbouncer did not listen on %s (%v)\n%s", addr, b.err, b.logTail())
		b.stop()
		return nil, err
	}
}

// url returns databaseURL (the run's database, direct) through the bouncer.
func (b *bouncer) url(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", err
	}
	u.Host = b.addr
	return u.String(), nil
}

// env returns a service cell's environment through the bouncer: the URL of
// databaseURL's database through it, and the service told it talks to a
// transaction pooler. They come last, so they win over the run's settings.
func (b *bouncer) env(env []string, databaseURL string) []string {
	pooled, err := b.url(databaseURL)
	if err != nil {
		pooled = databaseURL // the run's own URL, parsed when it was made
	}
	return append(slices.Clip(env), "PLANTSTORE_DATABASE_URL="+pooled, "PLANTSTORE_DATABASE_POOLER=transaction")
}

// stop shuts PgBouncer down at once (SIGTERM) and removes its directory.
func (b *bouncer) stop() {
	select {
	case <-b.exited:
	default:
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.exited:
		case <-time.After(10 * time.Second):
			_ = b.cmd.Process.Kill()
			<-b.exited
		}
	}
	_ = os.RemoveAll(b.dir)
}

// logTail is the end of PgBouncer's log, for error messages.
func (b *bouncer) logTail() string {
	data, _ := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// asPostgresUser makes cmd run as the postgres user when this runs as root,
// and hands it dir and the files in it.
func asPostgresUser(cmd *exec.Cmd, dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root, and no postgres user to run pgbouncer as: %w", err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	paths := []string{dir}
	for _, e := range entries {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	for _, path := range paths {
		if err := os.Lchown(path, uid, gid); err != nil {
			return err
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	return nil
}
