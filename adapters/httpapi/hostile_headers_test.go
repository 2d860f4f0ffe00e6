package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHostileHeaders covers odd and repeated headers, sizes at the limit,
// odd paths and methods, end to end.
func TestHostileHeaders(t *testing.T) {
	s := startServer(t)
	good := s.token(t, nil)
	body := []byte(`{"id":1,"name":"a"}`)
	nextID := 100
	fresh := func() []byte { nextID++; return []byte(fmt.Sprintf(`{"id":%d,"name":"a"}`, nextID)) }

	t.Run("content types", func(t *testing.T) {
		tests := []struct {
			name   string
			values []string
			status int
		}{
			{"identical twice", []string{"application/json", "application/json"}, 415},
			{"conflicting", []string{"application/json", "text/plain"}, 415},
			{"bogus parameter", []string{"application/json; foo=bar"}, 200},
			{"quoted parameters", []string{`application/json; charset="utf-8"; q="a b"`}, 200},
			{"parameter without value", []string{"application/json; charset"}, 415},
			{"empty parameters", []string{"application/json;;"}, 415},
			{"charset twice", []string{"application/json; charset=utf-8; charset=utf-8"}, 200},
			{"conflicting charsets", []string{"application/json; charset=utf-8; charset=latin1"}, 415},
			{"list of types", []string{"application/json, text/plain"}, 415},
			{"suffix type", []string{"application/merge-patch+json"}, 415},
			{"non-ASCII", []string{"application/jsön"}, 415},
			{"empty", []string{""}, 415},
			{"huge parameter", []string{"application/json; x=" + strings.Repeat("y", 10000)}, 200},
		}
		for _, tt := range tests {
			h := http.Header{"Authorization": {"Bearer " + good}, "Content-Type": tt.values}
			r := s.send(t, s.request(t, "POST", "/plants", h, bytes.NewReader(fresh())))
			if r.status != tt.status {
				t.Errorf("%s: got %d %s, want %d", tt.name, r.status, r.body, tt.status)
			}
		}
	})

	t.Run("authorization", func(t *testing.T) {
		tests := []struct {
			name   string
			values []string
			status int
			code   string
		}{
			{"100 KB token", []string{"Bearer " + strings.Repeat("a", 100<<10)}, 401, "40102"},
			{"100 KB of other scheme", []string{"Basic " + strings.Repeat("a", 100<<10)}, 401, "40101"},
			{"several spaces", []string{"Bearer     " + good}, 200, ""},
			{"leading and trailing white space", []string{" \tBearer " + good + " \t"}, 200, ""},
			{"tab after the scheme", []string{"Bearer\t" + good}, 401, "40101"},
			{"non-ASCII bytes", []string{"Bearer \x80\xfe\xff" + good}, 401, "40102"},
			{"non-ASCII text", []string{"Bearer tökén"}, 401, "40102"},
			{"two tokens", []string{"Bearer " + good + " " + good}, 401, "40102"},
			{"scheme only", []string{"Bearer"}, 401, "40101"},
			{"glued scheme", []string{"Bearer" + good}, 401, "40101"},
			{"two headers", []string{"Bearer " + good, "Bearer " + good}, 401, "40102"},
			{"two headers, other scheme first", []string{"Basic YTpi", "Bearer " + good}, 401, "40102"},
			{"empty", []string{""}, 401, "40101"},
		}
		for _, tt := range tests {
			h := http.Header{"Authorization": tt.values, "Content-Type": {"application/json"}}
			r := s.send(t, s.request(t, "POST", "/plants", h, bytes.NewReader(fresh())))
			if tt.status == 200 {
				r.expect(t, 200, `{"name":"a"}`)
				continue
			}
			r.expectError(t, tt.status, tt.code)
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), `Bearer realm="plantstore"`) {
				t.Errorf("%s: WWW-Authenticate %q", tt.name, r.header.Get("WWW-Authenticate"))
			}
			if len(r.body) > 200 || len(r.header.Get("WWW-Authenticate")) > 200 {
				t.Errorf("%s: the refusal repeats the token: %d-byte body", tt.name, len(r.body))
			}
		}
	})

	t.Run("request ids", func(t *testing.T) {
		sane := strings.Repeat("aZ09-_.:/+=", 12)[:128]
		for _, id := range []string{sane, "x", "7f3c2a1e-8d7b-4e55-9a0b-3c1d2e3f4a5b"} {
			r := s.do(t, "POST", "/plants", map[string]string{"X-Request-ID": id}, body)
			if got := r.header.Get("X-Request-ID"); got != id {
				t.Errorf("sane id %q echoed as %q", id, got)
			}
		}
		for _, id := range []string{sane + "a", "", " ", "a b", "a\tb", `a"b`, "a'b", "a;b", "a,b", "ünïcode", "\x80\xff",
			"<script>alert(1)</script>", "${jndi:ldap://x}", "a%0d%0aSet-Cookie:x", strings.Repeat("x", 10000)} {
			h := http.Header{"X-Request-Id": {id}}
			r := s.send(t, s.request(t, "GET", "/nope", h, nil))
			if got := r.header.Get("X-Request-ID"); got == "" || got == id || strings.ContainsAny(got, " \t\"'<;,%") {
				t.Errorf("hostile id %.40q answered with id %.40q", id, got)
			}
		}
		h := http.Header{"X-Request-Id": {"first", "second"}}
		if got := s.send(t, s.request(t, "GET", "/nope", h, nil)).header.Values("X-Request-ID"); len(got) != 1 || got[0] == "second" {
			t.Errorf("two request ids answered with %q", got)
		}
	})

	t.Run("body at the limit", func(t *testing.T) {
		h := http.Header{"Authorization": {"Bearer " + good}, "Content-Type": {"application/json"}}
		exact := func() []byte {
			b := fresh()
			return append(b, bytes.Repeat([]byte(" "), 65536-len(b))...)
		}
		// Known length, then unknown length (sent chunked).
		s.send(t, s.request(t, "POST", "/plants", h, bytes.NewReader(exact()))).expect(t, 200, `{"name":"a"}`)
		s.send(t, s.request(t, "POST", "/plants", h, bytes.NewReader(append(exact(), ' ')))).expectError(t, 413, "41301")
		s.send(t, s.request(t, "POST", "/plants", h, io.MultiReader(bytes.NewReader(exact())))).expect(t, 200, `{"name":"a"}`)
		s.send(t, s.request(t, "POST", "/plants", h, io.MultiReader(bytes.NewReader(append(exact(), ' '))))).expectError(t, 413, "41301")
	})

	t.Run("paths and methods", func(t *testing.T) {
		h := map[string]string{"Authorization": "Bearer " + good, "Content-Type": "application/json"}
		for _, m := range []string{"PATCH", "PUT", "DELETE", "OPTIONS", "FOO"} {
			r := s.do(t, m, "/plants", h, body)
			r.expectError(t, 405, "40501")
			if got, want := r.header.Get("Allow"), allowOf(t, s.api, "/plants"); got != want {
				t.Errorf("%s /plants: Allow %q, want %q", m, got, want)
			}
		}
		for _, m := range []string{"POST", "FOO", "DELETE"} {
			r := s.do(t, m, "/openapi.yaml", h, body)
			r.expectError(t, 405, "40501")
			if got, want := r.header.Get("Allow"), allowOf(t, s.api, "/openapi.yaml"); got != want {
				t.Errorf("%s /openapi.yaml: Allow %q, want %q", m, got, want)
			}
		}
		for _, m := range []string{"GET", "POST", "PATCH", "FOO"} {
			for _, p := range []string{"/nope", "/plants%00", "/pl%00ants", "/" + strings.Repeat("a", 8192), "/plants/1/" + strings.Repeat("%00", 1000)} {
				s.do(t, m, p, h, body).expectError(t, 404, "40401")
			}
		}
		// A hostile id is a bad parameter, named and not echoed.
		r := s.do(t, "DELETE", "/plants/"+strings.Repeat("%00", 1000), h, nil)
		r.expectError(t, 400, "40002")
		if len(r.body) > 200 {
			t.Errorf("the refusal repeats the id: %s", r.body)
		}
	})

	s.expectHealthy(t)
}
