package main

import (
	"strings"
	"testing"
)

// plantstore settings prints the value serve would take for every setting,
// defaults and variables alike, with secrets masked.
func TestSettingsPrintsEveryValueServeWouldTake(t *testing.T) {
	env := map[string]string{
		"PLANTSTORE_DATABASE_URL":   "postgres://app:hunter2@db:5432/plants",
		"PLANTSTORE_SHUTDOWN_DELAY": "5s",
	}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var out, errs strings.Builder
	if code := run(t.Context(), []string{"settings", "--addr", ":9000"}, getenv, &out, &errs); code != 0 {
		t.Fatalf("settings exited %d: %s", code, errs.String())
	}
	for _, line := range []string{
		"PLANTSTORE_ADDR=:9000",
		"PLANTSTORE_SHUTDOWN_DELAY=5s",
		"PLANTSTORE_SHUTDOWN_TIMEOUT=15s",
		"PLANTSTORE_DATABASE_URL=postgres://app:xxxxx@db:5432/plants",
	} {
		if !strings.Contains("\n"+out.String(), "\n"+line+"\n") {
			t.Errorf("settings lacks the line %s:\n%s", line, out.String())
		}
	}
	if strings.Contains(out.String(), "hunter2") {
		t.Error("settings printed a password")
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
			getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			var out, errs strings.Builder
			if code := run(t.Context(), []string{"settings"}, getenv, &out, &errs); code != 1 {
				t.Fatalf("settings exited %d, want 1", code)
			}
			if out.Len() != 0 || strings.Count(errs.String(), "\n") != 1 || !strings.Contains(errs.String(), "PLANTSTORE_") {
				t.Errorf("stdout %q, stderr %q: want nothing and one line naming the setting", out.String(), errs.String())
			}
		})
	}
}
