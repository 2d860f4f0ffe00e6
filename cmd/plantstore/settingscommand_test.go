package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
	"github.com/plantstore/plantstore/adapters/postgres"
)

// aKey is a token key as a configuration names it; prepare reads no file.
var aKey = map[string]string{"PLANTSTORE_JWT_SECRET_FILE": "/run/secrets/jwt"}

// with is vars and more.
func with(vars map[string]string, more ...string) map[string]string {
	out := maps.Clone(vars)
	for i := 0; i+1 < len(more); i += 2 {
		out[more[i]] = more[i+1]
	}
	return out
}

// settingLine is one line of `plantstore settings`.
type settingLine struct{ value, note string }

// settingsOf runs `plantstore settings` and reads its lines.
func settingsOf(t *testing.T, args []string, env map[string]string) map[string]settingLine {
	t.Helper()
	var out, errs strings.Builder
	if code := run(t.Context(), append([]string{"settings"}, args...), envOf(env), &out, &errs); code != 0 {
		t.Fatalf("settings exited %d: %s", code, errs.String())
	}
	return parseSettings(t, out.String())
}

// parseSettings reads NAME=value  # note lines.
func parseSettings(t *testing.T, out string) map[string]settingLine {
	t.Helper()
	lines := map[string]settingLine{}
	for line := range strings.Lines(out) {
		name, rest, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		value, note, noted := strings.Cut(rest, "  # ")
		if !ok || !noted || note == "" {
			t.Fatalf("settings printed %q; want NAME=value  # note", line)
		}
		lines[name] = settingLine{value, note}
	}
	return lines
}

// plantstore settings prints the value serve would take for every setting,
// defaults, variables and flags alike, each with where it came from
// (secrets masked: see TestStartUpLineAndSettingsMaskDatabasePasswords).
func TestSettingsPrintsEveryValueServeWouldTake(t *testing.T) {
	got := settingsOf(t, []string{"--addr", ":9000"}, with(aKey, "PLANTSTORE_SHUTDOWN_DELAY", "5s"))
	for name, want := range map[string]settingLine{
		"PLANTSTORE_ADDR":             {":9000", "--addr"},
		"PLANTSTORE_SHUTDOWN_DELAY":   {"5s", "environment"},
		"PLANTSTORE_SHUTDOWN_TIMEOUT": {"15s", "default"},
	} {
		if got[name] != want {
			t.Errorf("%s: %+v; want %+v", name, got[name], want)
		}
	}
	for _, st := range (&config{}).settings().Settings() {
		if _, ok := got[st.Env]; !ok {
			t.Errorf("settings lacks %s", st.Env)
		}
	}
}

// What serve derives is shown as what it comes to, never as auto: the
// PostgreSQL pool, the webhook's yield threshold, the Go runtime's
// settings, and the OTEL_* variables, defaults included, with the export
// headers' values masked.
func TestSettingsShowsWhatServeDerives(t *testing.T) {
	got := settingsOf(t, nil, with(aKey,
		"PLANTSTORE_DATABASE_URL", "postgres://plants@db.example/plants",
		"GOGC", "200",
		"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318",
		"OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20s3cr3t,X-Tenant=plants",
		"OTEL_TRACES_SAMPLER", "parentbased_traceidratio",
		"OTEL_TRACES_SAMPLER_ARG", "0.01",
	))
	for name, line := range got {
		if line.value == "auto" {
			t.Errorf("%s is shown as auto, not as what it comes to", name)
		}
		if strings.Contains(line.value+line.note, "s3cr3t") {
			t.Errorf("%s shows a secret: %+v", name, line)
		}
	}
	pool := strconv.Itoa(postgres.DefaultMaxOpenConns())
	memory := uint64(fallbackMemory)
	if limit, err := memlimit.FromCgroup(); err == nil {
		memory = limit
	}
	for name, want := range map[string]string{
		"PLANTSTORE_DB_MAX_OPEN_CONNS": pool,
		"PLANTSTORE_DB_MAX_IDLE_CONNS": pool,
		"PLANTSTORE_WEBHOOK_YIELD_AT":  strconv.Itoa(8 * runtime.GOMAXPROCS(0)),
		"GOMAXPROCS":                   strconv.Itoa(runtime.GOMAXPROCS(0)),
		"GOGC":                         "200",
		"GOMEMLIMIT":                   byteCount(int64(memoryLimitShare * float64(memory))),
		"OTEL_EXPORTER_OTLP_ENDPOINT":  "http://collector:4318",
		"OTEL_EXPORTER_OTLP_PROTOCOL":  "http/protobuf",
		"OTEL_EXPORTER_OTLP_TIMEOUT":   "10000",
		"OTEL_EXPORTER_OTLP_HEADERS":   "Authorization=xxxxx,X-Tenant=xxxxx",
		"OTEL_TRACES_SAMPLER":          "parentbased_traceidratio",
		"OTEL_SERVICE_NAME":            "plantstore",
		"OTEL_BSP_SCHEDULE_DELAY":      "5000",
	} {
		if got[name].value != want {
			t.Errorf("%s=%s (%s); want %s", name, got[name].value, got[name].note, want)
		}
	}
	if note := got["PLANTSTORE_DB_MAX_OPEN_CONNS"].note; !strings.Contains(note, "auto: max(8, 2 × GOMAXPROCS "+strconv.Itoa(runtime.GOMAXPROCS(0))+")") {
		t.Errorf("the pool's note %q does not say how auto came to %s", note, pool)
	}
	if note := got["OTEL_EXPORTER_OTLP_ENDPOINT"].note; !strings.Contains(note, "http://collector:4318/v1/traces") {
		t.Errorf("the endpoint's note %q does not say where spans go", note)
	}
	if note := got["OTEL_TRACES_SAMPLER"].note; !strings.Contains(note, "ratio 0.01") {
		t.Errorf("the sampler's note %q does not give its ratio", note)
	}
	// Settings serve would not use say so.
	sqlite := settingsOf(t, nil, aKey)
	if note := sqlite["PLANTSTORE_DB_MAX_OPEN_CONNS"].note; !strings.Contains(note, "not used: the store is SQLite") {
		t.Errorf("on SQLite the pool's note is %q", note)
	}
	if note := sqlite["PLANTSTORE_WEBHOOK_TIMEOUT"].note; !strings.Contains(note, "not used: no webhook receivers") {
		t.Errorf("without receivers the webhook timeout's note is %q", note)
	}
	if line := sqlite["OTEL_EXPORTER_OTLP_ENDPOINT"]; line.value != "" || !strings.Contains(line.note, "tracing off") {
		t.Errorf("without an endpoint: %+v; want tracing off", line)
	}
	// --dev without a key signs with the development secret, which
	// settings names and leaves to serve to create: it writes nothing.
	t.Chdir(t.TempDir())
	dev := settingsOf(t, []string{"--dev"}, nil)
	if line := dev["PLANTSTORE_JWT_SECRET_FILE"]; line.value != devSecretPath {
		t.Errorf("--dev without a key: %+v; want the development secret", line)
	}
	if entries, err := os.ReadDir("."); err != nil || len(entries) > 0 {
		t.Errorf("settings --dev wrote %v (%v); want nothing written", entries, err)
	}
}

// serve and settings run the same checks, one function: every
// configuration serve refuses, settings refuses with the same line and
// status, printing nothing, and neither starts anything.
func TestSettingsRefusesWhatServeRefusesWithTheSameLine(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"no token key":                   {},
		"bad duration":                   with(aKey, "PLANTSTORE_SHUTDOWN_DELAY", "soon"),
		"bad pool size":                  with(aKey, "PLANTSTORE_DB_MAX_OPEN_CONNS", "0"),
		"unknown store":                  with(aKey, "PLANTSTORE_DATABASE_URL", "mysql://db/plants"),
		"URLs with no secret":            with(aKey, "PLANTSTORE_WEBHOOK_URLS", "https://hooks.example/plants"),
		"secret with no URLs":            with(aKey, "PLANTSTORE_WEBHOOK_SECRET_FILE", "/run/secrets/whsec"),
		"OTLP over gRPC":                 with(aKey, "OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
		"OTLP endpoint without a scheme": with(aKey, "OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"),
		"unknown sampler":                with(aKey, "OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318", "OTEL_TRACES_SAMPLER", "jaeger_remote"),
		"malformed export headers":       with(aKey, "OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318", "OTEL_EXPORTER_OTLP_HEADERS", "Authorization: Bearer s3cr3t"),
		"GOGC the runtime ignores":       with(aKey, "GOGC", "400%"),
		"GOMEMLIMIT the runtime refuses": with(aKey, "GOMEMLIMIT", "100MB"),
		"unknown webhook payload":        with(aKey, "PLANTSTORE_WEBHOOK_PAYLOAD", "envelope"),
		"event retention under a minute": with(aKey, "PLANTSTORE_EVENT_RETENTION", "1ns"),
	} {
		t.Run(name, func(t *testing.T) {
			var lines [2]string
			for i, command := range []string{"serve", "settings"} {
				var out, errs strings.Builder
				if code := run(t.Context(), []string{command}, envOf(env), &out, &errs); code != 1 {
					t.Fatalf("%s exited %d, want 1 (stdout %q)", command, code, out.String())
				}
				if out.Len() != 0 || strings.Count(errs.String(), "\n") != 1 || strings.Contains(errs.String(), "s3cr3t") {
					t.Errorf("%s: stdout %q, stderr %q; want nothing and one line without secrets", command, out.String(), errs.String())
				}
				lines[i] = errs.String()
			}
			if lines[0] != lines[1] {
				t.Errorf("serve refused with %q, settings with %q", lines[0], lines[1])
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
		vars := with(aKey, "PLANTSTORE_DATABASE_URL", url)
		st, err := prepare("serve", nil, envOf(vars), io.Discard)
		require.NoError(t, err)
		var line strings.Builder
		slog.New(slog.NewJSONHandler(&line, nil)).Info("starting", st.startUpLine()...)
		var settings strings.Builder
		if code := run(t.Context(), []string{"settings"}, envOf(vars), &settings, io.Discard); code != 0 {
			t.Fatalf("settings exited %d", code)
		}
		if strings.Contains(line.String()+settings.String(), "s3cr3t") ||
			!strings.Contains(line.String(), `"PLANTSTORE_DATABASE_URL":"`+shown+`"`) || !strings.Contains(settings.String(), "\nPLANTSTORE_DATABASE_URL="+shown+"  # ") {
			t.Errorf("for %s, start-up line %s and settings:\n%s", url, line.String(), settings.String())
		}
	}
}

// The binary's serve starts with what its settings command shows for the
// same environment: every PLANTSTORE_* value of the start-up line, and the
// Go runtime's settings.
func TestServeStartsWithWhatSettingsShows(t *testing.T) {
	secretFile, _ := jwttest.New(t).Files(t)
	vars := map[string]string{
		"PLANTSTORE_JWT_SECRET_FILE":  secretFile,
		"PLANTSTORE_DATABASE_URL":     "sqlite:" + filepath.Join(t.TempDir(), "plants.db"),
		"PLANTSTORE_SHUTDOWN_TIMEOUT": "9s",
		"PLANTSTORE_WEBHOOK_YIELD_AT": "auto",
	}
	p := startProcess(t, vars["PLANTSTORE_DATABASE_URL"], vars)
	cmd := exec.Command(buildBinary(t), "settings")
	cmd.Env = serviceEnv(t, vars)
	out, err := cmd.Output()
	require.NoError(t, err, "settings")
	shown := parseSettings(t, string(out))

	var started map[string]any
	for line := range strings.Lines(p.stdout.String()) {
		if strings.Contains(line, `"msg":"starting"`) {
			require.NoError(t, json.Unmarshal([]byte(line), &started))
		}
	}
	require.NotNil(t, started, "no start-up line:\n%s", p.stdout.String())
	checked := 0
	for name, line := range shown {
		key := name
		if !strings.HasPrefix(name, envPrefix) {
			key = strings.ToLower(name)
		}
		value, ok := started[key]
		if !ok {
			continue // OTEL_*: the start-up line says tracing off
		}
		if got := fmt.Sprint(value); got != line.value {
			t.Errorf("%s: serve started with %s, settings showed %s", name, got, line.value)
		}
		checked++
	}
	if want := len((&config{}).settings().Settings()) + 3; checked != want {
		t.Errorf("compared %d values; want every setting and GOMAXPROCS, GOGC, GOMEMLIMIT (%d)", checked, want)
	}
	p.signal(t, os.Interrupt)
	p.waitExit(t, 20*time.Second)
}

// envOf is a getenv that finds vars alone.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}
