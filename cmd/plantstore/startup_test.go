package main

import (
	"database/sql"
	"io"
	"maps"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A setting whose value cannot be used (a file that is missing or holds no
// key, a store that cannot be opened, an address that is taken, a database
// that stays unreachable for the start-up wait) stops start-up with a status
// that is not 0 and one line that names the setting, as a value that does
// not parse does, without a password or the driver's name. Both listeners
// bind before either serves, so no listener has answered anything then.
func TestUnusableSettingsStopStartUpNamingTheSetting(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	write(t, empty, nil)
	notWhsec := filepath.Join(dir, "not-whsec")
	write(t, notWhsec, []byte("c2VjcmV0\n"))
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_ = closed.Close() // nothing listens there now: connections are refused
	webhook := func(secretFile string) map[string]string {
		return map[string]string{"PLANTSTORE_WEBHOOK_URLS": "http://127.0.0.1:1/hook", "PLANTSTORE_WEBHOOK_SECRET_FILE": secretFile}
	}

	for _, tc := range []struct {
		name, setting string
		env           map[string]string
		says          []string // on stderr, besides the setting
		logs          string   // on stdout
	}{
		{name: "missing secret file", setting: "PLANTSTORE_JWT_SECRET_FILE", env: map[string]string{"PLANTSTORE_JWT_SECRET_FILE": filepath.Join(dir, "absent")}},
		{name: "empty secret file", setting: "PLANTSTORE_JWT_SECRET_FILE", env: map[string]string{"PLANTSTORE_JWT_SECRET_FILE": empty}},
		{name: "missing public key file", setting: "PLANTSTORE_JWT_PUBLIC_KEY_FILE", env: map[string]string{"PLANTSTORE_JWT_PUBLIC_KEY_FILE": filepath.Join(dir, "absent")}},
		{name: "public key file without a key", setting: "PLANTSTORE_JWT_PUBLIC_KEY_FILE", env: map[string]string{"PLANTSTORE_JWT_PUBLIC_KEY_FILE": empty}},
		{name: "missing webhook secret file", setting: "PLANTSTORE_WEBHOOK_SECRET_FILE", env: webhook(filepath.Join(dir, "absent"))},
		{name: "webhook secret not in the whsec_ form", setting: "PLANTSTORE_WEBHOOK_SECRET_FILE", env: webhook(notWhsec)},
		{name: "embedded store in a missing folder", setting: "PLANTSTORE_DATABASE_URL", env: map[string]string{
			"PLANTSTORE_DATABASE_URL": "sqlite:" + filepath.Join(dir, "absent", "plants.db")}},
		{name: "PostgreSQL URL with a bad option", setting: "PLANTSTORE_DATABASE_URL", env: map[string]string{
			"PLANTSTORE_DATABASE_URL": "postgres://plants:hunter2@127.0.0.1:1/plants?sslmode=bogus"}},
		{name: "unreachable database, retried for the start-up wait", setting: "PLANTSTORE_DATABASE_URL", env: map[string]string{
			"PLANTSTORE_DATABASE_URL":    "postgres://plants:hunter2@" + closed.Addr().String() + "/plants?sslmode=disable",
			"PLANTSTORE_DB_STARTUP_WAIT": "2s",
		}, says: []string{closed.Addr().String(), "unreachable", "connection refused"}, logs: "database not reachable yet, retrying"},
		{name: "taken API address", setting: "PLANTSTORE_ADDR", env: map[string]string{"PLANTSTORE_ADDR": taken.Addr().String()}, says: []string{taken.Addr().String()}},
		{name: "taken admin address", setting: "PLANTSTORE_ADMIN_ADDR", env: map[string]string{"PLANTSTORE_ADMIN_ADDR": taken.Addr().String()}, says: []string{taken.Addr().String()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{
				"PLANTSTORE_DATABASE_URL":     "sqlite:" + filepath.Join(t.TempDir(), "plants.db"),
				"PLANTSTORE_SHUTDOWN_DELAY":   "0s",
				"PLANTSTORE_SHUTDOWN_TIMEOUT": "1s",
			}
			maps.Copy(env, tc.env)
			p := launch(t, env)
			if state := p.waitExit(t, time.Minute); state.ExitCode() == 0 {
				t.Fatal("serve started")
			}
			msg := p.stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") || !strings.HasPrefix(msg, "plantstore: "+tc.setting+": ") {
				t.Errorf("stderr = %q; want one line naming %s", msg, tc.setting)
			}
			for _, want := range tc.says {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr %q does not say %q", msg, want)
				}
			}
			if strings.Contains(p.output(), "hunter2") || strings.Contains(msg, "pq:") {
				t.Errorf("stderr = %q shows a password or the driver's name", msg)
			}
			if out := p.stdout.String(); !strings.Contains(out, tc.logs) || strings.Contains(out, `"msg":"listening"`) {
				t.Errorf("the log does not say %q, or a listener served before start-up failed:\n%s", tc.logs, out)
			}
		})
	}
}

// With migrations turned off, serve refuses a store whose schema is behind,
// naming the setting, and serves once `plantstore migrate` has run.
func TestServeWithoutMigratingNeedsAnUpToDateSchema(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		env := map[string]string{"PLANTSTORE_DATABASE_URL": db, "PLANTSTORE_MIGRATE": "false"}
		p := launch(t, env)
		if state := p.waitExit(t, time.Minute); state.ExitCode() == 0 {
			t.Fatal("serve started on a store without its schema")
		}
		if msg := p.stderr.String(); strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "plantstore: PLANTSTORE_MIGRATE: ") {
			t.Errorf("stderr = %q; want one line naming PLANTSTORE_MIGRATE", msg)
		}
		if n := countTables(t, db); n != 0 {
			t.Errorf("the refused start-up left %d tables in the store; want none", n)
		}
		var errs strings.Builder
		if code := run(t.Context(), []string{"migrate"}, envOf(env), io.Discard, &errs); code != 0 {
			t.Fatalf("plantstore migrate: %d %s", code, errs.String())
		}
		c := newCreator(t, startProcess(t, db, env), 1)
		if res := c.post(plantFor(1), ""); res.status != 200 {
			t.Fatalf("create after migrate: %d %s", res.status, res.body)
		}
	})
}

// countTables counts the tables of the store at databaseURL.
func countTables(t *testing.T, databaseURL string) int {
	t.Helper()
	driver, dsn, query := "postgres", databaseURL, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
	if path, ok := strings.CutPrefix(databaseURL, "sqlite:"); ok {
		driver, dsn, query = "sqlite", path, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
	}
	db, err := sql.Open(driver, dsn)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(query).Scan(&n))
	return n
}
