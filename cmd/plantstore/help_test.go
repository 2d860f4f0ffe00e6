package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// serve --help lists every setting of the product contract (PRODUCT.md §5)
// under its variable with the contract's default, and the OTEL_* variables
// the service honours.
func TestServeHelpListsEverySettingOfTheContract(t *testing.T) {
	var out, errs strings.Builder
	if code := run(t.Context(), []string{"serve", "--help"}, noEnv, &out, &errs); code != 0 {
		t.Fatalf("serve --help exited %d: %s", code, errs.String())
	}
	for variable, def := range map[string]string{
		"PLANTSTORE_ADDR":                ":8080",
		"PLANTSTORE_ADMIN_ADDR":          "127.0.0.1:9090",
		"PLANTSTORE_DATABASE_URL":        "sqlite:plantstore.db",
		"PLANTSTORE_JWT_SECRET_FILE":     "none",
		"PLANTSTORE_JWT_PUBLIC_KEY_FILE": "none",
		"PLANTSTORE_JWKS_URL":            "none",
		"PLANTSTORE_JWT_ISSUER":          "none",
		"PLANTSTORE_JWT_AUDIENCE":        "none",
		"PLANTSTORE_REQUIRED_SCOPE":      "plants:write",
		"PLANTSTORE_MAX_BODY_BYTES":      "65536",
		"PLANTSTORE_SHUTDOWN_TIMEOUT":    "15s",
		"PLANTSTORE_SHUTDOWN_DELAY":      "0s",
		"PLANTSTORE_LOG_LEVEL":           "info",
		"PLANTSTORE_READ_SCOPE":          "plants:read",
		"PLANTSTORE_WEBHOOK_URLS":        "none",
		"PLANTSTORE_WEBHOOK_SECRET_FILE": "none",
		"PLANTSTORE_WEBHOOK_MAX_AGE":     "72h",
		"PLANTSTORE_WEBHOOK_PAYLOAD":     "plant",
		"PLANTSTORE_DATABASE_POOLER":     "none",
		"PLANTSTORE_MAX_CONNECTIONS":     "512",
	} {
		if want := "(" + variable + ", default " + def + ")"; !strings.Contains(out.String(), want) {
			t.Errorf("serve --help lacks %s", want)
		}
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_SERVICE_NAME", "OTEL_TRACES_EXPORTER", "GOGC", "GOMEMLIMIT", "GOMAXPROCS"} {
		if !strings.Contains(out.String(), v) {
			t.Errorf("serve --help lacks %s", v)
		}
	}
}

// Every command answers --help with its usage on stdout and status 0, and a
// flag it does not know with one line on stderr and status 1.
func TestEveryCommandsHelpGoesToStdout(t *testing.T) {
	for _, command := range [][]string{
		{"serve"}, {"migrate"}, {"settings"}, {"token"}, {"webhooks"}, {"webhooks", "list"}, {"webhooks", "redeliver"}, {"webhooks", "listen"},
	} {
		name := strings.Join(command, " ")
		t.Run(name, func(t *testing.T) {
			var out, errs strings.Builder
			if code := run(t.Context(), append(command, "--help"), noEnv, &out, &errs); code != 0 || errs.Len() > 0 {
				t.Errorf("%s --help: status %d, stderr %q; want 0 and nothing", name, code, errs.String())
			}
			if o := out.String(); !strings.Contains(o, "Usage:") || !strings.Contains(o, "plantstore "+name) {
				t.Errorf("%s --help printed %q; want its usage", name, out.String())
			}
			if name == "webhooks" {
				return // its subcommands take the flags
			}
			out.Reset()
			errs.Reset()
			code := run(t.Context(), append(command, "--no-such-flag"), noEnv, &out, &errs)
			if code != 1 || out.Len() > 0 || strings.Count(errs.String(), "\n") != 1 || !strings.Contains(errs.String(), "no-such-flag") {
				t.Errorf("%s --no-such-flag: status %d, stdout %q, stderr %q; want 1 and one line naming the flag", name, code, out.String(), errs.String())
			}
		})
	}
}

// flagLine is a flag in a command's help, as every command writes it:
// "  --name  (VARIABLE, default value)" or "  --name  (default value)",
// its meaning on the next line.
var flagLine = regexp.MustCompile(`(?m)^  --([a-z-]+)  \((?:([A-Z_]+), )?default [^\n]*\)\n      \S`)

// Each command's help lists exactly the flags it reads, in the one format
// serve's help has: a flag a command would ignore is not offered, and one
// it reads is not hidden. serve and settings read every setting; the
// commands that only open the store read where it is and how to reach it.
func TestEveryCommandsHelpListsExactlyTheFlagsItReads(t *testing.T) {
	var every []string
	for _, st := range (&config{}).settings().Settings() {
		every = append(every, st.Flag)
	}
	store := []string{"database-url", "database-pooler", "db-startup-wait", "db-query-timeout"}
	for command, want := range map[string][]string{
		"serve":              every,
		"settings":           every,
		"migrate":            append(slices.Clone(store), "log-level"),
		"webhooks list":      append(slices.Clone(store), "failed", "limit"),
		"webhooks redeliver": append(slices.Clone(store), "all"),
		"token":              {"jwt-secret-file", "dev", "subject", "scope", "ttl", "issuer", "audience"},
		"webhooks listen":    {"addr", "secret-file", "dev"},
	} {
		t.Run(command, func(t *testing.T) {
			var out, errs strings.Builder
			if code := run(t.Context(), append(strings.Fields(command), "--help"), noEnv, &out, &errs); code != 0 {
				t.Fatalf("%s --help exited %d: %s", command, code, errs.String())
			}
			var listed []string
			for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
				listed = append(listed, m[1])
			}
			if strings.Count(out.String(), "\n  --") != len(listed) {
				t.Errorf("%s --help has flags in another format:\n%s", command, out.String())
			}
			slices.Sort(listed)
			want = slices.Sorted(slices.Values(want))
			if !slices.Equal(listed, want) {
				t.Errorf("%s --help lists %v; want %v", command, listed, want)
			}
		})
	}
}

// A flag of serve's that migrate does not read is refused, as any unknown
// flag is, rather than taken and ignored; its variable is ignored.
func TestMigrateRefusesTheFlagsItDoesNotRead(t *testing.T) {
	var out, errs strings.Builder
	if code := run(t.Context(), []string{"migrate", "--addr", ":9000"}, noEnv, &out, &errs); code != 1 || !strings.Contains(errs.String(), "flag provided but not defined: -addr") {
		t.Errorf("migrate --addr: status %d, stderr %q; want 1 and the flag refused", code, errs.String())
	}
	env := envOf(map[string]string{"PLANTSTORE_DATABASE_URL": "sqlite:" + t.TempDir() + "/plants.db", "PLANTSTORE_ADDR": "not an address"})
	out.Reset()
	errs.Reset()
	if code := run(t.Context(), []string{"migrate"}, env, &out, &errs); code != 0 {
		t.Errorf("migrate with PLANTSTORE_ADDR it does not read: status %d, %s", code, errs.String())
	}
}

// token and webhooks listen read their variables when their flags are not
// given, and a flag wins.
func TestOwnFlagsReadTheirVariables(t *testing.T) {
	secret := t.TempDir() + "/secret"
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"token"}, map[string]string{"PLANTSTORE_JWT_SECRET_FILE": secret}, secret},
		{[]string{"token", "--jwt-secret-file", secret}, map[string]string{"PLANTSTORE_JWT_SECRET_FILE": "/elsewhere"}, secret},
	} {
		var out, errs strings.Builder
		run(t.Context(), c.args, envOf(c.env), &out, &errs)
		// The secret file does not exist: the error names the file read.
		if !strings.Contains(errs.String(), c.want) {
			t.Errorf("%v with %v: %q; want the file %s read", c.args, c.env, errs.String(), c.want)
		}
	}
}
