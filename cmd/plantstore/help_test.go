package main

import (
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
		"PLANTSTORE_DATABASE_POOLER":     "none",
		"PLANTSTORE_MAX_CONNECTIONS":     "512",
	} {
		if want := "(" + variable + ", default " + def + ")"; !strings.Contains(out.String(), want) {
			t.Errorf("serve --help lacks %s", want)
		}
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_SERVICE_NAME", "OTEL_TRACES_EXPORTER"} {
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
