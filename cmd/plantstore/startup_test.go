package main

import (
	"database/sql"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A setting whose value cannot be used (a file that is missing or holds no
// key, a store that cannot be opened) stops start-up with one line that
// names the setting, as a value that does not parse does.
func TestUnusableSettingsStopStartUpNamingTheSetting(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	write(t, empty, nil)
	notWhsec := filepath.Join(dir, "not-whsec")
	write(t, notWhsec, []byte("c2VjcmV0\n"))
	sqliteURL := "sqlite:" + filepath.Join(dir, "plants.db")

	for _, tc := range []struct {
		name, setting string
		env           map[string]string
	}{
		{"missing secret file", "PLANTSTORE_JWT_SECRET_FILE", map[string]string{"PLANTSTORE_JWT_SECRET_FILE": filepath.Join(dir, "absent")}},
		{"empty secret file", "PLANTSTORE_JWT_SECRET_FILE", map[string]string{"PLANTSTORE_JWT_SECRET_FILE": empty}},
		{"missing public key file", "PLANTSTORE_JWT_PUBLIC_KEY_FILE", map[string]string{"PLANTSTORE_JWT_PUBLIC_KEY_FILE": filepath.Join(dir, "absent")}},
		{"public key file without a key", "PLANTSTORE_JWT_PUBLIC_KEY_FILE", map[string]string{"PLANTSTORE_JWT_PUBLIC_KEY_FILE": empty}},
		{"missing webhook secret file", "PLANTSTORE_WEBHOOK_SECRET_FILE", map[string]string{
			"PLANTSTORE_WEBHOOK_URLS": "http://127.0.0.1:1/hook", "PLANTSTORE_WEBHOOK_SECRET_FILE": filepath.Join(dir, "absent")}},
		{"webhook secret not in the whsec_ form", "PLANTSTORE_WEBHOOK_SECRET_FILE", map[string]string{
			"PLANTSTORE_WEBHOOK_URLS": "http://127.0.0.1:1/hook", "PLANTSTORE_WEBHOOK_SECRET_FILE": notWhsec}},
		{"embedded store in a missing folder", "PLANTSTORE_DATABASE_URL", map[string]string{
			"PLANTSTORE_DATABASE_URL": "sqlite:" + filepath.Join(dir, "absent", "plants.db")}},
		{"PostgreSQL URL with a bad option", "PLANTSTORE_DATABASE_URL", map[string]string{
			"PLANTSTORE_DATABASE_URL": "postgres://plants:hunter2@127.0.0.1:1/plants?sslmode=bogus"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"PLANTSTORE_DATABASE_URL": sqliteURL}
			for k, v := range tc.env {
				env[k] = v
			}
			p := launch(t, env)
			if state := p.waitExit(t, time.Minute); state.ExitCode() == 0 {
				t.Fatal("serve started")
			}
			msg := p.stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "plantstore: "+tc.setting+": ") {
				t.Errorf("stderr = %q; want one line naming %s", msg, tc.setting)
			}
			if strings.Contains(msg, "hunter2") || strings.Contains(msg, "pq:") {
				t.Errorf("stderr = %q shows a password or the driver's name", msg)
			}
		})
	}
}

// Both listeners bind before either serves: when an address is taken,
// start-up fails with one line naming the setting, and no listener answered
// anything.
func TestATakenAddressStopsStartUpBeforeAnyListenerServes(t *testing.T) {
	for _, setting := range []string{"PLANTSTORE_ADDR", "PLANTSTORE_ADMIN_ADDR"} {
		t.Run(setting, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			p := launch(t, map[string]string{
				"PLANTSTORE_DATABASE_URL":     "sqlite:" + filepath.Join(t.TempDir(), "plants.db"),
				setting:                       taken.Addr().String(),
				"PLANTSTORE_SHUTDOWN_DELAY":   "0s",
				"PLANTSTORE_SHUTDOWN_TIMEOUT": "1s",
			})
			if state := p.waitExit(t, time.Minute); state.ExitCode() == 0 {
				t.Fatalf("serve started on a taken %s", setting)
			}
			msg := p.stderr.String()
			if !strings.HasPrefix(msg, "plantstore: "+setting+": ") || !strings.Contains(msg, taken.Addr().String()) ||
				strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr = %q; want one line naming %s and the address", msg, setting)
			}
			if out := p.stdout.String(); strings.Contains(out, `"msg":"listening"`) {
				t.Errorf("a listener served before start-up failed:\n%s", out)
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
		cmd := exec.Command(buildBinary(t), "migrate")
		cmd.Env = append(os.Environ(), "PLANTSTORE_DATABASE_URL="+db)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("plantstore migrate: %v\n%s", err, out)
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
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
