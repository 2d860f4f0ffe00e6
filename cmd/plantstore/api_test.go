package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/docs"
)

func TestCreatePlant(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, nil)

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
	})
}

func TestCreateAcceptsTheBoundaries(t *testing.T) {
	cactus200 := strings.Repeat("🌵", 200)
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, nil)
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
	})
}

func TestErrorTable(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, map[string]string{"PLANTSTORE_MAX_BODY_BYTES": "1024"})
		good := s.token(t, nil)
		json := "application/json"
		auth := func(tok string) map[string]string {
			return map[string]string{"Authorization": "Bearer " + tok, "Content-Type": json}
		}
		edPub, edKey, _ := ed25519.GenerateKey(rand.Reader)
		_ = edPub
		tests := []struct {
			name    string
			method  string
			path    string
			header  map[string]string
			body    string
			status  int
			code    string
			wwwAuth string
		}{
			{"not JSON", "POST", "/plants", auth(good), `{"id":1,`, 400, "40001", ""},
			{"empty body", "POST", "/plants", auth(good), ``, 400, "40001", ""},
			{"trailing data", "POST", "/plants", auth(good), `{"id":1,"name":"a"}{}`, 400, "40001", ""},
			{"duplicate key", "POST", "/plants", auth(good), `{"id":1,"name":"a","name":"a"}`, 400, "40001", ""},
			{"invalid UTF-8", "POST", "/plants", auth(good), "{\"id\":1,\"name\":\"\xc3\x28\"}", 400, "40001", ""},
			{"array", "POST", "/plants", auth(good), `[]`, 400, "40001", ""},
			{"missing name", "POST", "/plants", auth(good), `{"id":1}`, 400, "40002", ""},
			{"unknown field", "POST", "/plants", auth(good), `{"id":1,"name":"a","Name":"a"}`, 400, "40002", ""},
			{"id as string", "POST", "/plants", auth(good), `{"id":"1","name":"a"}`, 400, "40002", ""},
			{"id as float", "POST", "/plants", auth(good), `{"id":1.0,"name":"a"}`, 400, "40002", ""},
			{"id out of range", "POST", "/plants", auth(good), `{"id":9223372036854775808,"name":"a"}`, 400, "40002", ""},
			{"blank name", "POST", "/plants", auth(good), `{"id":1,"name":"\t "}`, 400, "40002", ""},
			{"name too long", "POST", "/plants", auth(good), `{"id":1,"name":"` + strings.Repeat("a", 201) + `"}`, 400, "40002", ""},
			{"control character", "POST", "/plants", auth(good), `{"id":1,"name":"a\u0000"}`, 400, "40002", ""},
			{"empty tag", "POST", "/plants", auth(good), `{"id":1,"name":"a","tag":""}`, 400, "40002", ""},
			{"no Authorization", "POST", "/plants", map[string]string{"Content-Type": json}, `{"id":1,"name":"a"}`, 401, "40101", `Bearer realm="plantstore"`},
			{"Basic scheme", "POST", "/plants", map[string]string{"Authorization": "Basic YTpi", "Content-Type": json}, `{"id":1,"name":"a"}`, 401, "40101", `Bearer realm="plantstore"`},
			{"malformed token", "POST", "/plants", auth("not.a.jwt"), `{"id":1,"name":"a"}`, 401, "40102", `Bearer realm="plantstore", error="invalid_token"`},
			{"bad signature", "POST", "/plants", auth(good[:len(good)-4] + "AAAA"), `{"id":1,"name":"a"}`, 401, "40102", `Bearer realm="plantstore", error="invalid_token"`},
			{"expired", "POST", "/plants", auth(s.token(t, jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()})), `{"id":1,"name":"a"}`, 401, "40102", `Bearer realm="plantstore", error="invalid_token"`},
			{"no exp", "POST", "/plants", auth(s.token(t, jwt.MapClaims{"exp": nil})), `{"id":1,"name":"a"}`, 401, "40102", `Bearer realm="plantstore", error="invalid_token"`},
			{"not yet valid", "POST", "/plants", auth(s.token(t, jwt.MapClaims{"nbf": time.Now().Add(time.Hour).Unix()})), `{"id":1,"name":"a"}`, 401, "40102", `Bearer realm="plantstore", error="invalid_token"`},
			{"alg none", "POST", "/plants", auth(s.sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, nil)), `{"id":1,"name":"a"}`, 401, "40102", `Bearer realm="plantstore", error="invalid_token"`},
			{"unknown key", "POST", "/plants", auth(s.sign(t, jwt.SigningMethodEdDSA, edKey, nil)), `{"id":1,"name":"a"}`, 401, "40102", `Bearer realm="plantstore", error="invalid_token"`},
			{"token over 8 KiB", "POST", "/plants", auth(s.token(t, jwt.MapClaims{"pad": strings.Repeat("x", 8192)})), `{"id":1,"name":"a"}`, 401, "40102", `Bearer realm="plantstore", error="invalid_token"`},
			{"no scope", "POST", "/plants", auth(s.token(t, jwt.MapClaims{"scope": "plants:read"})), `{"id":1,"name":"a"}`, 403, "40301", `Bearer realm="plantstore", error="insufficient_scope", scope="plants:write"`},
			{"unknown route", "GET", "/nope", nil, ``, 404, "40401", ""},
			{"unknown route, POST", "POST", "/plants/1/leaves", auth(good), `{}`, 404, "40401", ""},
			{"wrong method on a plant", "POST", "/plants/1", auth(good), `{}`, 405, "40501", ""},
			{"wrong method", "PUT", "/plants", auth(good), ``, 405, "40501", ""},
			{"too large", "POST", "/plants", auth(good), `{"id":1,"name":"` + strings.Repeat("a", 2000) + `"}`, 413, "41301", ""},
			{"text/plain", "POST", "/plants", map[string]string{"Authorization": "Bearer " + good, "Content-Type": "text/plain"}, `{"id":1,"name":"a"}`, 415, "41501", ""},
			{"no content type", "POST", "/plants", map[string]string{"Authorization": "Bearer " + good}, `{"id":1,"name":"a"}`, 415, "41501", ""},
			{"other charset", "POST", "/plants", map[string]string{"Authorization": "Bearer " + good, "Content-Type": "application/json; charset=latin1"}, `{"id":1,"name":"a"}`, 415, "41501", ""},
			{"a content coding", "POST", "/plants", map[string]string{"Authorization": "Bearer " + good, "Content-Type": json, "Content-Encoding": "gzip"}, `{"id":1,"name":"a"}`, 415, "41501", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := s.do(t, tt.method, tt.path, tt.header, []byte(tt.body))
				r.expectError(t, tt.status, tt.code)
				if got := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, tt.wwwAuth) || (tt.wwwAuth == "" && got != "") {
					t.Fatalf("WWW-Authenticate %q, want %q", got, tt.wwwAuth)
				}
			})
		}
		// Nothing of the refused requests was stored.
		s.create(t, `{"id":1,"name":"stored once"}`).expect(t, 200, `{"name":"stored once"}`)

		for path, want := range map[string]string{"/plants": "GET, HEAD, POST", "/plants/1": "GET, HEAD, DELETE"} {
			r := s.do(t, "PUT", path, nil, nil)
			if allow := r.header.Get("Allow"); allow != want {
				t.Fatalf("PUT %s: Allow %q, want %q", path, allow, want)
			}
		}
		r := s.create(t, `{"id":3,"name":"a","color":"green"}`)
		if !strings.Contains(r.body, `"message":"color: unknown field"`) {
			t.Fatalf("the message must name the field: %s", r.body)
		}
	})
}

// A body with a content coding is refused, saying which one is accepted;
// identity is no coding at all.
func TestContentCodingsAreRefused(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), nil)
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
	s := startService(t, storeURLs()["sqlite"](t), nil)
	for i, h := range []map[string]string{
		{"Authorization": "bearer " + s.token(t, nil), "Content-Type": "application/json; charset=utf-8"},
		{"Authorization": "BEARER " + s.token(t, nil), "Content-Type": "Application/JSON;charset=UTF-8"},
		{"Authorization": "Bearer " + s.sign(t, jwt.SigningMethodRS256, s.rsaKey, nil), "Content-Type": "application/json"},
		{"Authorization": "Bearer " + s.token(t, jwt.MapClaims{"scope": nil, "scp": []string{"plants:read", "plants:write"}}), "Content-Type": "application/json"},
	} {
		s.do(t, "POST", "/plants", h, []byte(fmt.Sprintf(`{"id":%d,"name":"a"}`, i))).expect(t, 200, `{"name":"a"}`)
	}
}

func TestChecksRunInContractOrder(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), map[string]string{"PLANTSTORE_MAX_BODY_BYTES": "64"})
	big := `{"id":1,"name":"` + strings.Repeat("a", 100) + `"}`
	noScope := s.token(t, jwt.MapClaims{"scope": ""})
	// Authentication before content type, size and JSON.
	s.do(t, "POST", "/plants", map[string]string{"Content-Type": "text/plain"}, []byte(big)).expectError(t, 401, "40101")
	s.do(t, "POST", "/plants", map[string]string{"Authorization": "Bearer " + noScope, "Content-Type": "text/plain"}, []byte(big)).expectError(t, 403, "40301")
	// Content type before size, size before JSON.
	s.do(t, "POST", "/plants", map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "text/plain"}, []byte(big)).expectError(t, 415, "41501")
	s.do(t, "POST", "/plants", map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/json"}, []byte(big[:70]+"!")).expectError(t, 413, "41301")
	// Route before authentication.
	s.do(t, "DELETE", "/plants", nil, nil).expectError(t, 405, "40501")
}

func TestRequestIDs(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), nil)
	r := s.do(t, "GET", "/openapi.yaml", map[string]string{"X-Request-ID": "client-42.a_b:c"}, nil)
	if got := r.header.Get("X-Request-ID"); got != "client-42.a_b:c" {
		t.Fatalf("a sane client id must be echoed, got %q", got)
	}
	for _, hostile := range []string{strings.Repeat("a", 500), "a b", "<script>", "id\"quote", "ünïcode"} {
		r := s.do(t, "GET", "/nope", map[string]string{"X-Request-ID": hostile}, nil)
		if got := r.header.Get("X-Request-ID"); got == hostile || got == "" {
			t.Fatalf("hostile id %q must be replaced, got %q", hostile, got)
		}
	}
	a := s.do(t, "GET", "/nope", nil, nil).header.Get("X-Request-ID")
	b := s.do(t, "GET", "/nope", nil, nil).header.Get("X-Request-ID")
	if a == "" || a == b {
		t.Fatalf("new ids must be unique: %q %q", a, b)
	}
}

func TestOpenAPIDocumentIsServed(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), nil)
	r := s.do(t, "GET", "/openapi.yaml", nil, nil)
	if r.status != 200 || r.body != string(docs.OpenAPI) {
		t.Fatalf("GET /openapi.yaml: %d, %d bytes", r.status, len(r.body))
	}
}

func TestAccessLogCarriesRequestIDAndSubjectButNoToken(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), nil)
	tok := s.token(t, jwt.MapClaims{"sub": "gardener-7"})
	s.do(t, "POST", "/plants", map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json", "X-Request-ID": "req-123"},
		[]byte(`{"id":5,"name":"Secret body content"}`)).expect(t, 200, "")
	var line map[string]any
	for _, l := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(l, `"request_id":"req-123"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("log line is not JSON: %q", l)
			}
		}
	}
	if line == nil {
		t.Fatalf("no access line with the request id in:\n%s", s.logs.String())
	}
	for k, want := range map[string]any{"method": "POST", "route": "/plants", "path": "/plants", "status": float64(200), "subject": "gardener-7"} {
		if line[k] != want {
			t.Errorf("access line %s = %v, want %v", k, line[k], want)
		}
	}
	for _, k := range []string{"duration", "bytes"} {
		if _, ok := line[k]; !ok {
			t.Errorf("access line lacks %s", k)
		}
	}
	if logs := s.logs.String(); strings.Contains(logs, tok) || strings.Contains(logs, strings.Split(tok, ".")[2]) || strings.Contains(logs, "Secret body content") || strings.Contains(logs, string(s.secret)) {
		t.Fatal("the logs carry a token, a secret or a request body")
	}
}

// A 405 is on a route that exists: its access line names the route's
// pattern, as every answer of that route does; a 404 has none.
func TestAccessLogNamesTheRouteOfA405(t *testing.T) {
	s := startService(t, storeURLs()["sqlite"](t), nil)
	s.do(t, "PUT", "/plants/12", map[string]string{"X-Request-ID": "put-12"}, nil).expectError(t, 405, "40501")
	s.do(t, "PATCH", "/plants", map[string]string{"X-Request-ID": "patch-all"}, nil).expectError(t, 405, "40501")
	s.do(t, "GET", "/plant", map[string]string{"X-Request-ID": "no-route"}, nil).expectError(t, 404, "40401")
	for id, route := range map[string]string{"put-12": "/plants/{id}", "patch-all": "/plants", "no-route": "unmatched"} {
		if want := `"route":"` + route + `"`; !strings.Contains(accessLine(t, s.logs.String(), id), want) {
			t.Errorf("access line of %s lacks %s", id, want)
		}
	}
}

// accessLine is the access line of the request with the given id.
func accessLine(t *testing.T, logs, id string) string {
	t.Helper()
	for l := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(l, `"request_id":"`+id+`"`) {
			return l
		}
	}
	t.Fatalf("no access line with request id %s in:\n%s", id, logs)
	return ""
}

func TestAdminEndpoints(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, nil)
		s.create(t, `{"id":1,"name":"a"}`).expect(t, 200, "")
		s.create(t, `{"id":1,"name":"a"}`).expect(t, 200, "")
		s.create(t, `{"id":1,"name":"b"}`).expectError(t, 409, "40901")
		s.do(t, "POST", "/plants", nil, nil).expectError(t, 401, "40101")
		if r := s.adminGet(t, "/healthz"); r.status != 200 {
			t.Fatalf("healthz %d", r.status)
		}
		if r := s.adminGet(t, "/readyz"); r.status != 200 {
			t.Fatalf("readyz %d", r.status)
		}
		m := s.adminGet(t, "/metrics").body
		for _, want := range []string{
			`plantstore_http_requests_total{method="POST",route="/plants",status="200"} 2`,
			`plantstore_plant_operations_total{operation="create",outcome="created"} 1`,
			`plantstore_plant_operations_total{operation="create",outcome="replayed"} 1`,
			`plantstore_plant_operations_total{operation="create",outcome="conflict"} 1`,
			`plantstore_auth_failures_total{reason="missing"} 1`,
			`plantstore_build_info{`,
			`go_goroutines`,
		} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	})
}

func TestConcurrentCreatesOfOneID(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, nil)
		var wg sync.WaitGroup
		results := make([]response, 40)
		tok := s.token(t, nil)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := []string{`{"id":77,"name":"A"}`, `{"id":77,"name":"B"}`}[i%2]
				results[i] = s.do(t, "POST", "/plants", map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}, []byte(body))
			}()
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
		s.create(t, `{"id":77,"name":"A"}`)
	})
}
