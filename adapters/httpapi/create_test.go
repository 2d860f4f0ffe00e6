package httpapi

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

func TestCreatePlant(t *testing.T) {
	s := startServer(t)
	s.create(t, `{"id":1,"name":"Monstera deliciosa","tag":"tropical"}`).
		expect(t, 200, `{"name":"Monstera deliciosa","tag":"tropical"}`)
	// A retry with the same content replays the stored plant.
	s.create(t, `{"tag":"tropical","name":"Monstera deliciosa","id":1}`).
		expect(t, 200, `{"name":"Monstera deliciosa","tag":"tropical"}`)
	// Other content under the same id conflicts and changes nothing.
	s.create(t, `{"id":1,"name":"Monstera deliciosa"}`).expectError(t, 409, "40901")
	s.create(t, `{"id":1,"name":"Monstera","tag":"tropical"}`).expectError(t, 409, "40901")
	s.create(t, `{"id":1,"name":"Monstera deliciosa","tag":"tropical"}`).
		expect(t, 200, `{"name":"Monstera deliciosa","tag":"tropical"}`)

	// A plant without a tag answers without one; null means no tag.
	s.create(t, `{"id":2,"name":"Aloe"}`).expect(t, 200, `{"name":"Aloe"}`)
	s.create(t, `{"id":2,"name":"Aloe","tag":null}`).expect(t, 200, `{"name":"Aloe"}`)
	s.create(t, `{"id":2,"name":"Aloe","tag":"x"}`).expectError(t, 409, "40901")
}

func TestCreateAcceptsTheBoundaries(t *testing.T) {
	cactus200 := strings.Repeat("🌵", 200)
	s := startServer(t)
	tests := []struct{ body, want string }{
		{`{"id":9223372036854775807,"name":"max"}`, `{"name":"max"}`},
		{`{"id":-9223372036854775808,"name":"min"}`, `{"name":"min"}`},
		{`{"id":0,"name":"zero"}`, `{"name":"zero"}`},
		{`{"id":10,"name":"` + cactus200 + `","tag":"` + strings.Repeat("🌵", 64) + `"}`,
			`{"name":"` + cactus200 + `","tag":"` + strings.Repeat("🌵", 64) + `"}`},
		{`{"id":11,"name":"Ficus \u00e9l\u00e1stica \ud83c\udf3f","tag":"\u5927\u8449"}`, `{"name":"Ficus élástica 🌿","tag":"大葉"}`},
		{`{"id":12,"name":"  spaced  ","tag":" t "}`, `{"name":"  spaced  ","tag":" t "}`},
		{`{"id":13,"name":"e\u0301 RTL \u05e9\u05dc\u05d5\u05dd"}`, "{\"name\":\"e\u0301 RTL \u05e9\u05dc\u05d5\u05dd\"}"},
		{`{"id":14,"name":"quote \" backslash \\ slash \/"}`, `{"name":"quote \" backslash \\ slash /"}`},
	}
	for _, tt := range tests {
		s.create(t, tt.body).expect(t, 200, tt.want)
		// The round trip is exact: the same content replays.
		s.create(t, tt.body).expect(t, 200, tt.want)
	}
	// NFC and NFD spellings are different content.
	s.create(t, "{\"id\":13,\"name\":\"\u00e9 RTL \u05e9\u05dc\u05d5\u05dd\"}").expectError(t, 409, "40901")
}

// A body with a content coding is refused, saying which one is accepted;
// identity is no coding at all.
func TestContentCodingsAreRefused(t *testing.T) {
	s := startServer(t)
	header := func(coding string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/json", "Content-Encoding": coding}
	}
	for _, coding := range []string{"gzip", "br", "identity, gzip", "x-unknown"} {
		r := s.do(t, "POST", "/plants", header(coding), []byte(`{"id":1,"name":"a"}`))
		r.expectError(t, 415, "41501")
		if !strings.Contains(r.body, "Content-Encoding") || r.header.Get("Accept-Encoding") != "identity" {
			t.Errorf("Content-Encoding %s: %s, Accept-Encoding %q", coding, r.body, r.header.Get("Accept-Encoding"))
		}
	}
	s.call(t, "GET", "/plants/1").expectError(t, 404, "40402")
	s.do(t, "POST", "/plants", header("Identity"), []byte(`{"id":1,"name":"a"}`)).expect(t, 200, `{"name":"a"}`)
}

func TestAcceptedContentTypesAndSchemes(t *testing.T) {
	s := startServer(t)
	for i, h := range []map[string]string{
		{"Authorization": "bearer " + s.token(t, nil), "Content-Type": "application/json; charset=utf-8"},
		{"Authorization": "BEARER " + s.token(t, nil), "Content-Type": "Application/JSON;charset=UTF-8"},
		{"Authorization": "Bearer " + s.keys.Sign(t, jwt.SigningMethodRS256, s.keys.RSA, nil), "Content-Type": "application/json"},
		{"Authorization": "Bearer " + s.token(t, jwt.MapClaims{"scope": nil, "scp": []string{"plants:read", "plants:write"}}), "Content-Type": "application/json"},
	} {
		s.do(t, "POST", "/plants", h, []byte(fmt.Sprintf(`{"id":%d,"name":"a"}`, i))).expect(t, 200, `{"name":"a"}`)
	}
}

func TestChecksRunInContractOrder(t *testing.T) {
	s := startServer(t, withMaxBody(64))
	big := `{"id":1,"name":"` + strings.Repeat("a", 100) + `"}`
	noScope := s.keys.Scoped(t, "")
	// Authentication before content type, size and JSON.
	s.do(t, "POST", "/plants", map[string]string{"Content-Type": "text/plain"}, []byte(big)).expectError(t, 401, "40101")
	s.do(t, "POST", "/plants", map[string]string{"Authorization": "Bearer " + noScope, "Content-Type": "text/plain"}, []byte(big)).expectError(t, 403, "40301")
	// Content type before size, size before JSON.
	s.do(t, "POST", "/plants", map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "text/plain"}, []byte(big)).expectError(t, 415, "41501")
	s.do(t, "POST", "/plants", map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/json"}, []byte(big[:70]+"!")).expectError(t, 413, "41301")
	// Route before authentication.
	s.do(t, "DELETE", "/plants", nil, nil).expectError(t, 405, "40501")
}

// Concurrent creates of one id with different content: one content wins,
// every other answer is its replay or a conflict. That the stores keep one
// winner is the store suite's OneWinnerUnderConcurrentCreatesOfOneID.
func TestConcurrentCreatesOfOneID(t *testing.T) {
	s := startServer(t)
	var wg sync.WaitGroup
	results := make([]response, 40)
	tok := s.token(t, nil)
	for i := range results {
		wg.Go(func() {
			body := []string{`{"id":77,"name":"A"}`, `{"id":77,"name":"B"}`}[i%2]
			results[i] = s.do(t, "POST", "/plants", map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}, []byte(body))
		})
	}
	wg.Wait()
	winner := ""
	for _, r := range results {
		switch r.status {
		case 200:
			if winner != "" && r.body != winner {
				t.Fatalf("two different plants acknowledged: %s and %s", winner, r.body)
			}
			winner = r.body
		case 409:
		default:
			t.Fatalf("a race answered %d %s", r.status, r.body)
		}
	}
	if winner == "" {
		t.Fatal("no create succeeded")
	}
	// The winner stays: its replay is acknowledged again, the other refused.
	if winner == `{"name":"A"}` {
		s.create(t, `{"id":77,"name":"A"}`).expect(t, 200, winner)
		s.create(t, `{"id":77,"name":"B"}`).expectError(t, 409, "40901")
	} else {
		s.create(t, `{"id":77,"name":"B"}`).expect(t, 200, winner)
		s.create(t, `{"id":77,"name":"A"}`).expectError(t, 409, "40901")
	}
}
