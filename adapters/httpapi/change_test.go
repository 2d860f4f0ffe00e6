package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/domain"
)

// patch sends body as a merge patch of path with a valid token and the
// given extra headers.
func (s *testServer) patch(t *testing.T, path, body string, header map[string]string) response {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/merge-patch+json"}
	for k, v := range header {
		h[k] = v
	}
	return s.do(t, http.MethodPatch, path, h, []byte(body))
}

func TestChangePlant(t *testing.T) {
	s := startServer(t)
	s.create(t, `{"id":7,"name":"Monstera","tag":"aroid"}`).expect(t, 200, "")
	for _, tt := range []struct{ patch, want string }{
		{`{"name":"Monstera adansonii"}`, `{"id":7,"name":"Monstera adansonii","tag":"aroid"}`},
		{`{"tag":"  vine  "}`, `{"id":7,"name":"Monstera adansonii","tag":"  vine  "}`},
		{`{"tag":null}`, `{"id":7,"name":"Monstera adansonii"}`},
		{`{}`, `{"id":7,"name":"Monstera adansonii"}`},
		{` { "name" : "Ficus \u00e9", "tag" : "tree" } `, `{"id":7,"name":"Ficus é","tag":"tree"}`},
	} {
		r := s.patch(t, "/plants/7", tt.patch, nil)
		r.expect(t, 200, tt.want)
		read := s.call(t, "GET", "/plants/7")
		read.expect(t, 200, tt.want)
		if r.header.Get("ETag") == "" || r.header.Get("ETag") != read.header.Get("ETag") {
			t.Fatalf("PATCH %s: ETag %q; the read answers %q", tt.patch, r.header.Get("ETag"), read.header.Get("ETag"))
		}
	}
	// application/json is a merge patch too.
	s.do(t, "PATCH", "/plants/7", map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/json; charset=utf-8"},
		[]byte(`{"name":"Fig"}`)).expect(t, 200, `{"id":7,"name":"Fig","tag":"tree"}`)
	// A create replay compares with the plant as it is now.
	s.create(t, `{"id":7,"name":"Monstera","tag":"aroid"}`).expectError(t, 409, "40901")
	s.create(t, `{"id":7,"name":"Fig","tag":"tree"}`).expect(t, 200, `{"name":"Fig","tag":"tree"}`)
	// Absent or deleted: 404.
	s.patch(t, "/plants/8", `{"name":"Moss"}`, nil).expectError(t, 404, "40402")
	s.call(t, "DELETE", "/plants/7").expect(t, 204, "")
	s.patch(t, "/plants/7", `{}`, nil).expectError(t, 404, "40402")
}

func TestChangeRefusesBadRequests(t *testing.T) {
	s := startServer(t, withMaxBody(1024))
	s.create(t, `{"id":7,"name":"Monstera"}`).expect(t, 200, "")
	for _, tt := range []struct {
		name, path, contentType, body string
		status                        int
		code, message                 string
	}{
		{"id", "/plants/7", "", `{"id":7}`, 400, "40002", "id: cannot be changed"},
		{"null name", "/plants/7", "", `{"name":null}`, 400, "40002", "name: must be a string"},
		{"empty name", "/plants/7", "", `{"name":""}`, 400, "40002", "name: must not be empty"},
		{"empty tag", "/plants/7", "", `{"tag":""}`, 400, "40002", "tag: must not be empty"},
		{"tag of the wrong type", "/plants/7", "", `{"tag":1}`, 400, "40002", "tag: must be a string or null"},
		{"unknown key", "/plants/7", "", `{"Name":"x"}`, 400, "40002", "Name: unknown field"},
		{"every problem", "/plants/7", "", `{"id":1,"name":2,"x":3}`, 400, "40002", "id: cannot be changed; name: must be a string; x: unknown field"},
		{"duplicate key", "/plants/7", "", `{"name":"a","name":"b"}`, 400, "40001", ""},
		{"not an object", "/plants/7", "", `[]`, 400, "40001", ""},
		{"empty body", "/plants/7", "", ``, 400, "40001", ""},
		{"null body", "/plants/7", "", `null`, 400, "40001", ""},
		{"trailing data", "/plants/7", "", `{} {}`, 400, "40001", ""},
		{"invalid UTF-8", "/plants/7", "", "{\"name\":\"\xff\"}", 400, "40001", ""},
		{"too large", "/plants/7", "", `{"name":"` + strings.Repeat("a", 2000) + `"}`, 413, "41301", ""},
		{"text", "/plants/7", "text/plain", `{}`, 415, "41501", "Content-Type: must be application/merge-patch+json or application/json"},
		{"JSON Patch", "/plants/7", "application/json-patch+json", `[]`, 415, "41501", ""},
		{"another charset", "/plants/7", "application/merge-patch+json; charset=latin1", `{}`, 415, "41501", ""},
		{"no content type", "/plants/7", "-", `{}`, 415, "41501", ""},
		{"bad id before the content type", "/plants/07", "text/plain", `{}`, 400, "40002", "id: must be"},
		{"query", "/plants/7?dryRun=1", "", `{}`, 400, "40002", "dryRun: unknown query parameter"},
		{"content type before the body", "/plants/7", "text/plain", `{`, 415, "41501", ""},
	} {
		h := map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/merge-patch+json"}
		switch tt.contentType {
		case "":
		case "-":
			delete(h, "Content-Type")
		default:
			h["Content-Type"] = tt.contentType
		}
		r := s.do(t, "PATCH", tt.path, h, []byte(tt.body))
		r.expectError(t, tt.status, tt.code)
		if !strings.Contains(r.body, `"message":"`+tt.message) {
			t.Errorf("%s: %s; want the message %q", tt.name, r.body, tt.message)
		}
	}
	h := map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/merge-patch+json", "Content-Encoding": "gzip"}
	s.do(t, "PATCH", "/plants/7", h, []byte(`{}`)).expectError(t, 415, "41501")
	// Authentication and scope come first.
	s.do(t, "PATCH", "/plants/07", map[string]string{"Content-Type": "text/plain"}, []byte(`{`)).expectError(t, 401, "40101")
	reader := map[string]string{"Authorization": "Bearer " + s.keys.Scoped(t, "plants:read"), "Content-Type": "application/merge-patch+json"}
	r := s.do(t, "PATCH", "/plants/7", reader, []byte(`{"name":"Moss"}`))
	r.expectError(t, 403, "40301")
	if got := r.header.Get("WWW-Authenticate"); !strings.Contains(got, `scope="plants:write"`) {
		t.Fatalf("WWW-Authenticate %q must name plants:write", got)
	}
	// Nothing of it was written.
	s.call(t, "GET", "/plants/7").expect(t, 200, `{"id":7,"name":"Monstera"}`)
}

// With If-Match, a change is made only over the state whose ETag it lists.
func TestChangeWithIfMatch(t *testing.T) {
	s := startServer(t)
	first := s.create(t, `{"id":7,"name":"Monstera"}`).header.Get("ETag")
	s.patch(t, "/plants/7", `{"tag":"x"}`, map[string]string{"If-Match": `"stale"`}).expectError(t, 412, "41201")
	s.patch(t, "/plants/7", `{"tag":"x"}`, map[string]string{"If-Match": "W/" + first}).expectError(t, 412, "41201")
	s.call(t, "GET", "/plants/7").expect(t, 200, `{"id":7,"name":"Monstera"}`)

	r := s.patch(t, "/plants/7", `{"tag":"x"}`, map[string]string{"If-Match": `"stale", ` + first})
	r.expect(t, 200, `{"id":7,"name":"Monstera","tag":"x"}`)
	second := r.header.Get("ETag")
	if second == first {
		t.Fatal("a change kept the ETag")
	}
	// The first ETag is stale now.
	s.patch(t, "/plants/7", `{"tag":null}`, map[string]string{"If-Match": first}).expectError(t, 412, "41201")
	s.patch(t, "/plants/7", `{}`, map[string]string{"If-Match": first}).expectError(t, 412, "41201")
	// "*" matches any stored plant; an absent one is 404 whatever the headers.
	s.patch(t, "/plants/7", `{"tag":null}`, map[string]string{"If-Match": "*"}).expect(t, 200, `{"id":7,"name":"Monstera"}`)
	s.patch(t, "/plants/8", `{}`, map[string]string{"If-Match": "*"}).expectError(t, 404, "40402")
	s.patch(t, "/plants/8", `{}`, map[string]string{"If-Match": second}).expectError(t, 404, "40402")
	// Changing back to an earlier state gives back its ETag.
	if got := s.patch(t, "/plants/7", `{}`, map[string]string{"If-Match": first}).header.Get("ETag"); got != first {
		t.Fatalf("the first state again has ETag %q; want %q", got, first)
	}
}

// Of many writers holding one ETag, exactly one changes the plant; every
// other one answers 412 and its change is not made.
func TestOneWinnerAmongChangesWithOneETag(t *testing.T) {
	s := startServer(t)
	tag := s.create(t, `{"id":7,"name":"Monstera"}`).header.Get("ETag")
	const writers = 16
	statuses := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			req := s.request(t, "PATCH", "/plants/7", http.Header{
				"Authorization": {"Bearer " + s.token(t, nil)}, "Content-Type": {"application/merge-patch+json"}, "If-Match": {tag},
			}, strings.NewReader(`{"name":"Writer `+string(rune('A'+i))+`"}`))
			resp, err := s.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			s.contract.Check(t, req, resp, body)
			statuses[i] = resp.StatusCode
			if resp.StatusCode == 412 && !bytes.HasPrefix(body, []byte(`{"error":41201,`)) {
				t.Errorf("writer %d: 412 with %s", i, body)
			}
		})
	}
	wg.Wait()
	won := 0
	for i, st := range statuses {
		switch st {
		case 200:
			won++
		case 412:
		default:
			t.Errorf("writer %d answered %d; want 200 or 412", i, st)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers holding one ETag changed the plant; want exactly 1 (%v)", won, statuses)
	}
}

// A merge patch decodes to a change, a syntax error or field problems, never
// anything else, and only from a valid JSON object.
func FuzzDecodePlantPatch(f *testing.F) {
	for _, seed := range []string{`{}`, `{"name":"Moss"}`, `{"tag":null}`, `{"id":1}`, `{"name":null}`, `{"x":1,"y":2}`, `[]`, `{"name":"a","name":"b"}`, ``} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		change, err := decodePlantPatch(body)
		var se *syntaxError
		var fields domain.FieldErrors
		switch {
		case err == nil:
			if !json.Valid(body) || bytes.TrimSpace(body)[0] != '{' {
				t.Fatalf("%q decoded to a change", body)
			}
			if change.Name != nil && change.Name.String() == "" {
				t.Fatalf("%q decoded to an empty name", body)
			}
		case errors.As(err, &se), errors.As(err, &fields):
		default:
			t.Fatalf("%q: unexpected error %T %v", body, err, err)
		}
	})
}
