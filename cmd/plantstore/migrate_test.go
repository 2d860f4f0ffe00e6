package main

import (
	"strings"
	"testing"
)

// migrate says whether it applied migrations: an operator reads from its
// log what a run did to the database.
func TestMigrateSaysWhetherItAppliedMigrations(t *testing.T) {
	env := envOf(map[string]string{"PLANTSTORE_DATABASE_URL": "sqlite:" + t.TempDir() + "/plants.db"})
	for _, want := range []string{"schema migrated", "schema is up to date"} {
		var out, errs strings.Builder
		if code := run(t.Context(), []string{"migrate"}, env, &out, &errs); code != 0 {
			t.Fatalf("migrate: status %d, %s", code, errs.String())
		}
		if !strings.Contains(out.String(), `"msg":"`+want) {
			t.Errorf("migrate logged %q, want %q", out.String(), want)
		}
	}
}
