package httpapi

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
)

// TestInjectionAttemptsAreStoredAsText sends names built to break SQL,
// templates, HTML and logs: they are plain text to the API, stored and
// answered exactly as sent, and the API keeps working. That every store
// keeps them verbatim is the store suite's StoresInjectionAttemptsAsText.
func TestInjectionAttemptsAreStoredAsText(t *testing.T) {
	s := startServer(t)
	names := []string{
		`'; DROP TABLE plants; --`, `Robert'); DROP TABLE plants;--`, `" OR "1"="1`, `1; SELECT pg_sleep(10)`,
		`\'; --`, `%s%n%x`, `${jndi:ldap://example.invalid/a}`, `{{7*7}}`, `<script>alert(1)</script>`,
		"line\u2028separator", "right-to-left \u202eoverride", `$1::text`, `?`, `E'\\x41'`,
	}
	for i, name := range names {
		const tag = `' OR ''='`
		body, err := json.Marshal(map[string]any{"id": 1000 + i, "name": name, "tag": tag})
		if err != nil {
			t.Fatal(err)
		}
		r := s.create(t, string(body))
		var got map[string]string
		if r.status != 200 || json.Unmarshal([]byte(r.body), &got) != nil || !maps.Equal(got, map[string]string{"name": name, "tag": tag}) {
			t.Fatalf("%q: got %d %s", name, r.status, r.body)
		}
		s.create(t, string(body)).expect(t, 200, r.body)
	}
	// A subject built to forge a log record stays inside its own field.
	forged := "eve\n{\"level\":\"ERROR\",\"msg\":\"forged\"}"
	s.do(t, "POST", "/plants", map[string]string{
		"Authorization": "Bearer " + s.token(t, jwt.MapClaims{"sub": forged}), "Content-Type": "application/json",
	}, []byte(`{"id":2000,"name":"a"}`)).expect(t, 200, `{"name":"a"}`)
	require.Eventually(t, func() bool { return strings.Contains(s.logs.String(), `"subject":"eve\n{`) },
		5*time.Second, time.Millisecond, "the access line of the forged subject")
	subjects := 0
	for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
		var record map[string]any
		if err := json.Unmarshal([]byte(line), &record); err != nil {
			t.Fatalf("a log line is not one JSON record: %q", line)
		}
		if record["subject"] == forged {
			subjects++
		}
	}
	if subjects != 1 {
		t.Fatalf("%d access lines carry the forged subject intact, want 1", subjects)
	}
	// A subject of kilobytes is cut in the line, as a path is, never
	// inside a character.
	long := strings.Repeat("é", 2000)
	r := s.do(t, "POST", "/plants", map[string]string{
		"Authorization": "Bearer " + s.token(t, jwt.MapClaims{"sub": long}), "Content-Type": "application/json",
		"X-Request-ID": "long-subject",
	}, []byte(`{"id":2001,"name":"a"}`))
	r.expect(t, 200, `{"name":"a"}`)
	var record map[string]any
	if err := json.Unmarshal([]byte(s.accessLine(t, "long-subject")), &record); err != nil || record["subject"] != long[:maxLoggedSubject] {
		t.Fatalf("access line subject %q (%v), want the first %d bytes of the subject", record["subject"], err, maxLoggedSubject)
	}
	s.expectHealthy(t)
}
