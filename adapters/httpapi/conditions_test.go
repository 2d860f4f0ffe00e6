package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The conditional requests of RFC 9110 §13 beyond If-Match on writes and
// If-None-Match on reads (etag_test.go, change_test.go, delete_test.go):
// If-None-Match on PATCH and DELETE, If-Match on GET and HEAD, and both
// together.

const (
	ifMatchFailed        = `{"error":41201,"message":"If-Match: the plant has changed since that ETag was read"}`
	ifNoneMatchFailed    = `{"error":41201,"message":"If-None-Match: the plant is in a state that the header lists"}`
	ifMatchMalformed     = `{"error":41201,"message":"If-Match: must be \"*\" or a comma-separated list of entity-tags (\"…\" or W/\"…\")"}`
	ifNoneMatchMalformed = `{"error":41201,"message":"If-None-Match: must be \"*\" or a comma-separated list of entity-tags (\"…\" or W/\"…\")"}`
)

// A change or a delete with If-None-Match is made only when the header
// lists neither the stored plant's ETag (weak forms count) nor "*";
// otherwise 412 and nothing changes. An absent plant is 404 whatever the
// header, and authentication comes first.
func TestWritesWithIfNoneMatch(t *testing.T) {
	s := startServer(t)
	tag := s.create(t, `{"id":7,"name":"Monstera"}`).header.Get("ETag")
	auth := "Bearer " + s.token(t, nil)
	for _, inm := range []string{tag, "W/" + tag, "*", `"other", ` + tag} {
		s.patch(t, "/plants/7", `{"tag":"x"}`, map[string]string{"If-None-Match": inm}).expect(t, 412, ifNoneMatchFailed)
		s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-None-Match": inm}, nil).expect(t, 412, ifNoneMatchFailed)
	}
	// A value that is not "*" or a list of entity-tags names no state, and
	// a write made on it would be made on a condition nobody can read.
	for _, inm := range []string{`"other",*`, `"other"junk`, `junk "other"`, `"other`, "other"} {
		s.patch(t, "/plants/7", `{"tag":"x"}`, map[string]string{"If-None-Match": inm}).expect(t, 412, ifNoneMatchMalformed)
		s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-None-Match": inm}, nil).expect(t, 412, ifNoneMatchMalformed)
	}
	// Two header lines are one list.
	h := http.Header{"Authorization": {auth}, "If-None-Match": {`"other"`, tag}}
	s.send(t, s.request(t, "DELETE", "/plants/7", h, nil)).expect(t, 412, ifNoneMatchFailed)
	s.call(t, "GET", "/plants/7").expect(t, 200, `{"id":7,"name":"Monstera"}`)

	// Lists of other states hold.
	r := s.patch(t, "/plants/7", `{"tag":"x"}`, map[string]string{"If-None-Match": `"other", W/"more"`})
	r.expect(t, 200, `{"id":7,"name":"Monstera","tag":"x"}`)
	second := r.header.Get("ETag")
	s.patch(t, "/plants/7", `{"name":"Moss"}`, map[string]string{"If-None-Match": tag}).expect(t, 200, `{"id":7,"name":"Moss","tag":"x"}`)
	s.patch(t, "/plants/7", `{}`, map[string]string{"If-None-Match": `"other",,`}).expect(t, 200, `{"id":7,"name":"Moss","tag":"x"}`)
	s.patch(t, "/plants/7", `{}`, map[string]string{"If-None-Match": ""}).expect(t, 200, `{"id":7,"name":"Moss","tag":"x"}`) // an empty list
	// Back in the state that second names, a write that forbids it fails.
	s.patch(t, "/plants/7", `{"name":"Monstera"}`, nil).expect(t, 200, "")
	s.patch(t, "/plants/7", `{"name":"Fern"}`, map[string]string{"If-None-Match": second}).expect(t, 412, ifNoneMatchFailed)
	s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-None-Match": second}, nil).expect(t, 412, ifNoneMatchFailed)
	s.call(t, "GET", "/plants/7").expect(t, 200, `{"id":7,"name":"Monstera","tag":"x"}`)
	s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-None-Match": tag}, nil).expect(t, 204, "")

	// Absent: 404, "*" included; authentication and scope first.
	for _, inm := range []string{"*", tag, `"other"`} {
		s.patch(t, "/plants/7", `{}`, map[string]string{"If-None-Match": inm}).expectError(t, 404, "40402")
		s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-None-Match": inm}, nil).expectError(t, 404, "40402")
	}
	s.create(t, `{"id":7,"name":"Monstera"}`).expect(t, 200, "")
	s.do(t, "DELETE", "/plants/7", map[string]string{"If-None-Match": "*"}, nil).expectError(t, 401, "40101")
	reader := "Bearer " + s.keys.Scoped(t, "plants:read")
	s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": reader, "If-None-Match": "*"}, nil).expectError(t, 403, "40301")
	s.do(t, "PATCH", "/plants/7", map[string]string{"Authorization": reader, "Content-Type": "application/merge-patch+json", "If-None-Match": "*"},
		[]byte(`{}`)).expectError(t, 403, "40301")
}

// A read with If-Match answers the plant only when the header lists its
// ETag, compared strongly, or is "*"; otherwise 412, a HEAD without a
// body. An absent plant is 404 whatever the header, and authentication and
// scope come first.
func TestReadsWithIfMatch(t *testing.T) {
	s := startServer(t)
	tag := s.create(t, `{"id":7,"name":"Monstera"}`).header.Get("ETag")
	auth := "Bearer " + s.token(t, nil)
	for _, tt := range []struct {
		name, im string
		status   int
		refusal  string
	}{
		{"its tag", tag, 200, ""},
		{"in a list", `"other", ` + tag, 200, ""},
		{"any", "*", 200, ""},
		{"another tag", `"other"`, 412, ifMatchFailed},
		{"weak form", "W/" + tag, 412, ifMatchFailed},
		{"unquoted", tag[1 : len(tag)-1], 412, ifMatchMalformed},
		{"empty", "", 412, ifMatchFailed}, // an empty list lists no ETag
		{"its tag and junk", tag + "junk", 412, ifMatchMalformed},
		{"any beside a tag", "*, " + tag, 412, ifMatchMalformed},
		{"any and junk", "*junk", 412, ifMatchMalformed},
	} {
		get := s.do(t, "GET", "/plants/7", map[string]string{"Authorization": auth, "If-Match": tt.im}, nil)
		head := s.do(t, "HEAD", "/plants/7", map[string]string{"Authorization": auth, "If-Match": tt.im}, nil)
		switch tt.status {
		case 200:
			get.expect(t, 200, `{"id":7,"name":"Monstera"}`)
			if get.header.Get("ETag") != tag || head.status != 200 || head.header.Get("ETag") != tag {
				t.Errorf("If-Match %s: GET ETag %q, HEAD %d ETag %q; want 200 with %q", tt.name, get.header.Get("ETag"), head.status, head.header.Get("ETag"), tag)
			}
		default:
			get.expect(t, 412, tt.refusal)
			if head.status != 412 || head.body != "" {
				t.Errorf("HEAD with If-Match %s: %d %q; want 412 without a body", tt.name, head.status, head.body)
			}
		}
	}
	s.do(t, "GET", "/plants/8", map[string]string{"Authorization": auth, "If-Match": `"other"`}, nil).expectError(t, 404, "40402")
	s.do(t, "GET", "/plants/8", map[string]string{"Authorization": auth, "If-Match": "*"}, nil).expectError(t, 404, "40402")
	if r := s.do(t, "HEAD", "/plants/8", map[string]string{"Authorization": auth, "If-Match": "*"}, nil); r.status != 404 {
		t.Errorf("HEAD of an absent plant with If-Match *: %d; want 404", r.status)
	}
	s.do(t, "GET", "/plants/7", map[string]string{"If-Match": `"other"`}, nil).expectError(t, 401, "40101")
	writer := "Bearer " + s.keys.Scoped(t, "plants:write")
	s.do(t, "GET", "/plants/7", map[string]string{"Authorization": writer, "If-Match": `"other"`}, nil).expectError(t, 403, "40301")
	// A read refused for its condition is counted as such.
	w := httptest.NewRecorder()
	promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := `plantstore_plant_operations_total{operation="get",outcome="precondition_failed"} 14`; !strings.Contains(w.Body.String(), want) {
		t.Errorf("the metrics lack %s:\n%s", want, w.Body)
	}
}

// An If-Match that is not "*" or a list of entity-tags holds for no plant:
// a change or a delete with one is refused, whatever tags it spells out,
// and nothing changes.
func TestWritesWithAMalformedIfMatch(t *testing.T) {
	s := startServer(t)
	tag := s.create(t, `{"id":7,"name":"Monstera"}`).header.Get("ETag")
	auth := "Bearer " + s.token(t, nil)
	for _, lines := range [][]string{{tag + "junk"}, {tag + " junk"}, {"*, " + tag}, {"*junk"}, {`"stale"`, "*"}, {`"stale`}} {
		h := http.Header{"Authorization": {auth}, "Content-Type": {"application/merge-patch+json"}, "If-Match": lines}
		s.send(t, s.request(t, "PATCH", "/plants/7", h, strings.NewReader(`{"name":"Moss"}`))).expect(t, 412, ifMatchMalformed)
		s.send(t, s.request(t, "DELETE", "/plants/7", h, nil)).expect(t, 412, ifMatchMalformed)
	}
	r := s.call(t, "GET", "/plants/7")
	r.expect(t, 200, `{"id":7,"name":"Monstera"}`)
	if r.header.Get("ETag") != tag {
		t.Errorf("after refused writes the ETag is %q; want %q", r.header.Get("ETag"), tag)
	}
}

// With both headers, If-Match is evaluated first (RFC 9110 §13.2.2): its
// failure is the answer, whatever If-None-Match says; when it holds,
// If-None-Match decides (304 for a read, 412 for a write).
func TestIfMatchIsEvaluatedBeforeIfNoneMatch(t *testing.T) {
	s := startServer(t)
	tag := s.create(t, `{"id":7,"name":"Monstera"}`).header.Get("ETag")
	auth := "Bearer " + s.token(t, nil)
	for _, tt := range []struct {
		name, im, inm string
		read          int    // GET's status
		write         string // the answer of a PATCH and a DELETE, "" when they go ahead
	}{
		{"If-Match fails, If-None-Match fails", `"other"`, tag, 412, ifMatchFailed},
		{"If-Match fails, If-None-Match holds", `"other"`, `"other"`, 412, ifMatchFailed},
		{"If-Match holds, If-None-Match fails", tag, "*", 304, ifNoneMatchFailed},
		{"If-Match holds, If-None-Match holds", "*", `"other"`, 200, ""},
	} {
		get := s.do(t, "GET", "/plants/7", map[string]string{"Authorization": auth, "If-Match": tt.im, "If-None-Match": tt.inm}, nil)
		if get.status != tt.read {
			t.Errorf("GET, %s: %d %s; want %d", tt.name, get.status, get.body, tt.read)
		}
		if tt.read == 412 && get.body != ifMatchFailed {
			t.Errorf("GET, %s: %s; want %s", tt.name, get.body, ifMatchFailed)
		}
		if tt.write == "" {
			continue
		}
		s.patch(t, "/plants/7", `{"name":"Moss"}`, map[string]string{"If-Match": tt.im, "If-None-Match": tt.inm}).expect(t, 412, tt.write)
		s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-Match": tt.im, "If-None-Match": tt.inm}, nil).expect(t, 412, tt.write)
	}
	s.call(t, "GET", "/plants/7").expect(t, 200, `{"id":7,"name":"Monstera"}`)
	next := s.patch(t, "/plants/7", `{"name":"Moss"}`, map[string]string{"If-Match": tag, "If-None-Match": `"other"`})
	next.expect(t, 200, `{"id":7,"name":"Moss"}`)
	s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-Match": next.header.Get("ETag"), "If-None-Match": tag}, nil).expect(t, 204, "")
}

// Of many writers that each set one state only if the plant is not in it
// already (If-None-Match with that state's ETag), exactly one changes the
// plant; every other one answers 412, and its change is not made.
func TestOneWinnerAmongChangesWithIfNoneMatch(t *testing.T) {
	s := startServer(t)
	// The ETag of the state every writer sets, read from the plant in it.
	target := s.create(t, `{"id":7,"name":"Target"}`).header.Get("ETag")
	s.patch(t, "/plants/7", `{"name":"Original"}`, nil).expect(t, 200, "")
	const writers = 16
	statuses := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			req := s.request(t, "PATCH", "/plants/7", http.Header{
				"Authorization": {"Bearer " + s.token(t, nil)}, "Content-Type": {"application/merge-patch+json"}, "If-None-Match": {target},
			}, strings.NewReader(`{"name":"Target"}`))
			resp, err := s.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			s.contract.Check(t, req, resp, body)
			statuses[i] = resp.StatusCode
			if resp.StatusCode == 412 && !bytes.Equal(body, []byte(ifNoneMatchFailed)) {
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
		t.Fatalf("%d writers changed the plant to a state their If-None-Match forbids; want exactly 1 (%v)", won, statuses)
	}
	s.call(t, "GET", "/plants/7").expect(t, 200, `{"id":7,"name":"Target"}`)
}

// A plant's ETag is its only validator: no answer carries Last-Modified,
// and If-Modified-Since and If-Unmodified-Since are ignored (RFC 9110
// §13.1.3, §13.1.4), whatever dates they name: a read answers the plant,
// never 304, and a write is made, never 412.
func TestDateConditionsAreIgnored(t *testing.T) {
	s := startServer(t)
	s.create(t, `{"id":7,"name":"Monstera"}`).expect(t, 200, "")
	future, past := "Sun, 06 Nov 2124 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT"
	auth := "Bearer " + s.token(t, nil)
	for _, h := range []map[string]string{{"If-Modified-Since": future}, {"If-Unmodified-Since": past}} {
		h["Authorization"] = auth
		r := s.do(t, "GET", "/plants/7", h, nil)
		r.expect(t, 200, `{"id":7,"name":"Monstera"}`)
		if lm := r.header.Get("Last-Modified"); lm != "" {
			t.Errorf("a read carries Last-Modified %q; the ETag is the only validator", lm)
		}
	}
	s.patch(t, "/plants/7", `{"tag":"x"}`, map[string]string{"If-Unmodified-Since": past}).expect(t, 200, `{"id":7,"name":"Monstera","tag":"x"}`)
	s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-Unmodified-Since": past}, nil).expect(t, 204, "")
}
