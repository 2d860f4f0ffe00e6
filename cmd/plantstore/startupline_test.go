package main

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestStartUpLineMasksDatabasePasswords checks the one place configuration
// is logged: the start-up line never shows a database password.
func TestStartUpLineMasksDatabasePasswords(t *testing.T) {
	for url, shown := range map[string]string{
		"postgres://plants:s3cr3t-pw@db.example:5432/plants?sslmode=disable":               "postgres://plants:xxxxx@db.example:5432/plants?sslmode=disable",
		"postgresql://db.example/plants?user=plants&password=s3cr3t-pw":                    "postgresql://db.example/plants?password=xxxxx&user=plants",
		"postgres://plants:pw@db.example/plants?password=s3cr3t-pw&sslpassword=s3cr3t-key": "postgres://plants:xxxxx@db.example/plants?password=xxxxx&sslpassword=xxxxx",
	} {
		getenv := func(k string) (string, bool) {
			if k == "PLANTSTORE_DATABASE_URL" {
				return url, true
			}
			return "", false
		}
		cfg, err := loadConfig("serve", nil, getenv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		slog.New(slog.NewJSONHandler(&out, nil)).Info("starting", cfg.Core.startUpLine...)
		if strings.Contains(out.String(), "s3cr3t") || !strings.Contains(out.String(), `"PLANTSTORE_DATABASE_URL":"`+shown+`"`) {
			t.Fatalf("start-up line for %s: %s", url, out.String())
		}
	}
}
