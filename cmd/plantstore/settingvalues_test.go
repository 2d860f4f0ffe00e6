package main

import (
	"io"
	"strings"
	"testing"
)

// A scope setting is one scope or empty: a value that no token could hold
// as one scope (two scopes, a quote) stops start-up naming the setting.
func TestScopeSettingsAreOneScopeOrEmpty(t *testing.T) {
	for _, variable := range []string{"PLANTSTORE_REQUIRED_SCOPE", "PLANTSTORE_READ_SCOPE"} {
		for value, ok := range map[string]bool{
			"plants:admin":              true,
			"https://plants.example/rw": true,
			"":                          true,
			"plants:write plants:admin": false,
			`plants:read "x"`:           false,
			`plants\read`:               false,
			"plants:read\t":             false,
			"pl\u00e4nts":               false,
		} {
			c, err := loadConfig("serve", nil, envOf(map[string]string{variable: value}), io.Discard)
			switch {
			case ok && err != nil:
				t.Errorf("%s=%q: %v", variable, value, err)
			case ok:
				got := map[string]scope{"PLANTSTORE_REQUIRED_SCOPE": c.Scopes.Write, "PLANTSTORE_READ_SCOPE": c.Scopes.Read}[variable]
				if string(got) != value {
					t.Errorf("%s=%q: the setting is %q", variable, value, got)
				}
			case err == nil || !strings.HasPrefix(err.Error(), variable) || strings.Contains(err.Error(), "\n"):
				t.Errorf("%s=%q: error %v; want one line naming the setting", variable, value, err)
			}
		}
	}
}
