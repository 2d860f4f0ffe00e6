package pgcluster

import (
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// front is a program in front of the cluster that clients connect to:
// HAProxy, or PgBouncer.
type front struct {
	*daemon
	port int
}

// daemonOrNil is f's process, or nil before f started.
func (f *front) daemonOrNil() *daemon {
	if f == nil {
		return nil
	}
	return f.daemon
}

// startHAProxy starts HAProxy in front of the members, leading to the one
// whose REST API answers 200 to GET /primary.
func (h *HA) startHAProxy(t testing.TB, bin string) {
	t.Helper()
	settings := haproxySettings{Host: "127.0.0.1", Port: h.port()}
	for _, m := range h.Members {
		settings.Members = append(settings.Members, patroniSettings{Name: m.Name, Host: "127.0.0.1", PGPort: m.Port, APIPort: m.APIPort})
	}
	config := filepath.Join(h.dir, "haproxy.cfg")
	render(t, "haproxy.cfg", config, settings)
	// -db: in the foreground, not as a daemon, so that it is killed with
	// the test.
	h.haproxy = &front{startDaemon(t, filepath.Join(h.dir, "haproxy.log"), h.dir, false, bin, "-db", "-f", config), settings.Port}
	h.waitListening(t, h.haproxy)
}

// startPgBouncer starts PgBouncer, in transaction mode, in front of
// HAProxy, as the server user: PgBouncer refuses to run as root.
func (h *HA) startPgBouncer(t testing.TB, bin string) {
	t.Helper()
	settings := pgbouncerSettings{
		Host: "127.0.0.1", Port: h.port(), HAProxyHost: "127.0.0.1", HAProxyPort: h.haproxy.port,
		AuthType: "trust", AuthFile: filepath.Join(h.dir, "userlist.txt"),
	}
	render(t, "userlist.txt", settings.AuthFile, userlistSettings{})
	config := filepath.Join(h.dir, "pgbouncer.ini")
	render(t, "pgbouncer.ini", config, settings)
	h.pgbouncer = &front{startDaemon(t, filepath.Join(h.dir, "pgbouncer.log"), h.dir, true, bin, config), settings.Port}
	h.waitListening(t, h.pgbouncer)
}

// waitListening waits until f accepts connections.
func (h *HA) waitListening(t testing.TB, f *front) {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(f.port))
	h.waitFor(t, 10*time.Second, "nothing listens on "+addr, func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err
	})
}
