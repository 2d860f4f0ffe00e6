package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Every refusal of a create, one row each: its status, its Error code and
// its WWW-Authenticate challenge. No row reaches the store.
func TestErrorTable(t *testing.T) {
	s := startServer(t, withMaxBody(1024))
	good := s.token(t, nil)
	json := "application/json"
	auth := func(tok string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + tok, "Content-Type": json}
	}
	const invalid = `Bearer realm="plantstore", error="invalid_token"`
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
		{"malformed token", "POST", "/plants", auth("not.a.jwt"), `{"id":1,"name":"a"}`, 401, "40102", invalid},
		{"bad signature", "POST", "/plants", auth(good[:len(good)-4] + "AAAA"), `{"id":1,"name":"a"}`, 401, "40102", invalid},
		{"expired", "POST", "/plants", auth(s.keys.Expired(t)), `{"id":1,"name":"a"}`, 401, "40102", invalid},
		{"no exp", "POST", "/plants", auth(s.token(t, jwt.MapClaims{"exp": nil})), `{"id":1,"name":"a"}`, 401, "40102", invalid},
		{"not yet valid", "POST", "/plants", auth(s.token(t, jwt.MapClaims{"nbf": time.Now().Add(time.Hour).Unix()})), `{"id":1,"name":"a"}`, 401, "40102", invalid},
		{"alg none", "POST", "/plants", auth(s.keys.AlgNone(t)), `{"id":1,"name":"a"}`, 401, "40102", invalid},
		{"unknown key", "POST", "/plants", auth(s.keys.UnknownKey(t)), `{"id":1,"name":"a"}`, 401, "40102", invalid},
		{"token over 8 KiB", "POST", "/plants", auth(s.token(t, jwt.MapClaims{"pad": strings.Repeat("x", 8192)})), `{"id":1,"name":"a"}`, 401, "40102", invalid},
		{"no scope", "POST", "/plants", auth(s.keys.Scoped(t, "plants:read")), `{"id":1,"name":"a"}`, 403, "40301", `Bearer realm="plantstore", error="insufficient_scope", scope="plants:write"`},
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

	for _, path := range []string{"/plants", "/plants/1"} {
		r := s.do(t, "PUT", path, nil, nil)
		if allow, want := r.header.Get("Allow"), allowOf(t, s.api, path); allow != want {
			t.Fatalf("PUT %s: Allow %q, want %q", path, allow, want)
		}
	}
	r := s.create(t, `{"id":3,"name":"a","color":"green"}`)
	if !strings.Contains(r.body, `"message":"color: unknown field"`) {
		t.Fatalf("the message must name the field: %s", r.body)
	}
}

// However many parameters a request gets wrong, its error body stays small:
// the message names the first maxProblemsNamed problems and counts the rest,
// as it does for a body's unknown fields.
func TestAnErrorBodyNamesAFewProblemsWhateverTheRequest(t *testing.T) {
	s := startServer(t, withStore(seededStore(t)))
	many := func(param string) string {
		params := make([]string, 1500)
		for i := range params {
			params[i] = strings.ReplaceAll(param, "N", strconv.Itoa(i))
		}
		return strings.Join(params, "&")
	}
	for _, c := range []struct{ name, path string }{
		{"unknown parameters of a list", "/plants?" + many("pN=1")},
		{"a parameter repeated", "/plants?" + many("limit=N")},
		{"unknown parameters of a read", "/plants/1?" + many("pN=1")},
		{"unknown parameters of the feed", "/events?" + many("pN=1")},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.call(t, http.MethodGet, c.path)
			r.expectError(t, http.StatusBadRequest, "40002")
			if len(r.body) > 1024 || !strings.Contains(r.body, "; and 1495 more problems") {
				t.Fatalf("a %d-byte body: %.300s…; want at most 1 KB naming five problems and counting the rest", len(r.body), r.body)
			}
		})
	}
}
