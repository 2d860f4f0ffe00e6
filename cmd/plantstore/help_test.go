package main

import (
	"strings"
	"testing"
)

// serve --help lists every setting of the product contract (PRODUCT.md §5)
// under its variable with the contract's default.
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
	} {
		if want := "(" + variable + ", default " + def + ")"; !strings.Contains(out.String(), want) {
			t.Errorf("serve --help lacks %s", want)
		}
	}
}
