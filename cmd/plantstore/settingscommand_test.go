package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// plantstore settings prints the value serve would take for every setting,
// defaults, variables and flags alike (secrets masked: see
// TestStartUpLineAndSettingsMaskDatabasePasswords).
func TestSettingsPrintsEveryValueServeWouldTake(t *testing.T) {
	env := map[string]string{"PLANTSTORE_SHUTDOWN_DELAY": "5s"}
	var out, errs strings.Builder
	if code := run(t.Context(), []string{"settings", "--addr", ":9000"}, envOf(env), &out, &errs); code != 0 {
		t.Fatalf("settings exited %d: %s", code, errs.String())
	}
	for _, line := range []string{
		"PLANTSTORE_ADDR=:9000",
		"PLANTSTORE_SHUTDOWN_DELAY=5s",
		"PLANTSTORE_SHUTDOWN_TIMEOUT=15s",
	} {
		if !strings.Contains("\n"+out.String(), "\n"+line+"\n") {
			t.Errorf("settings lacks the line %s:\n%s", line, out.String())
		}
	}
}

// A value serve would refuse is refused with serve's one line, and nothing
// is printed on stdout.
func TestSettingsRefusesWhatServeRefuses(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"bad duration":        {"PLANTSTORE_SHUTDOWN_DELAY": "soon"},
		"URLs with no secret": {"PLANTSTORE_WEBHOOK_URLS": "https://hooks.example/plants"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errs strings.Builder
			if code := run(t.Context(), []string{"settings"}, envOf(env), &out, &errs); code != 1 {
				t.Fatalf("settings exited %d, want 1", code)
			}
			if out.Len() != 0 || strings.Count(errs.String(), "\n") != 1 || !strings.Contains(errs.String(), "PLANTSTORE_") {
				t.Errorf("stdout %q, stderr %q: want nothing and one line naming the setting", out.String(), errs.String())
			}
		})
	}
}

// The start-up line, the one place serve logs its configuration, and the
// settings command never show a database password.
func TestStartUpLineAndSettingsMaskDatabasePasswords(t *testing.T) {
	for url, shown := range map[string]string{
		"postgres://plants:s3cr3t-pw@db.example:5432/plants?sslmode=disable":               "postgres://plants:xxxxx@db.example:5432/plants?sslmode=disable",
		"postgresql://db.example/plants?user=plants&password=s3cr3t-pw":                    "postgresql://db.example/plants?password=xxxxx&user=plants",
		"postgres://plants:pw@db.example/plants?password=s3cr3t-pw&sslpassword=s3cr3t-key": "postgres://plants:xxxxx@db.example/plants?password=xxxxx&sslpassword=xxxxx",
	} {
		getenv := envOf(map[string]string{"PLANTSTORE_DATABASE_URL": url})
		cfg, err := loadConfig("serve", nil, getenv, io.Discard)
		require.NoError(t, err)
		var line, settings strings.Builder
		slog.New(slog.NewJSONHandler(&line, nil)).Info("starting", cfg.Core.startUpLine...)
		if code := run(t.Context(), []string{"settings"}, getenv, &settings, io.Discard); code != 0 {
			t.Fatalf("settings exited %d", code)
		}
		if strings.Contains(line.String()+settings.String(), "s3cr3t") ||
			!strings.Contains(line.String(), `"PLANTSTORE_DATABASE_URL":"`+shown+`"`) || !strings.Contains(settings.String(), "\nPLANTSTORE_DATABASE_URL="+shown+"\n") {
			t.Errorf("for %s, start-up line %s and settings:\n%s", url, line.String(), settings.String())
		}
	}
}

// envOf is a getenv that finds vars alone.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}
