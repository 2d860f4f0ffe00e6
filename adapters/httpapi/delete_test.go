package httpapi

import (
	"strings"
	"sync"
	"testing"
)

func TestDeletePlant(t *testing.T) {
	s := startServer(t)
	s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`).expect(t, 200, "")

	r := s.call(t, "DELETE", "/plants/5")
	r.expect(t, 204, "")
	if r.body != "" || r.header.Get("Content-Type") != "" {
		t.Fatalf("204 with a body or a content type: %q %q", r.header.Get("Content-Type"), r.body)
	}
	r = s.call(t, "DELETE", "/plants/5")
	r.expectError(t, 404, "40402")
	if !strings.Contains(r.body, `"message":"no plant with id 5"`) {
		t.Fatalf("the message must name the id: %s", r.body)
	}
	s.call(t, "DELETE", "/plants/-9223372036854775808").expectError(t, 404, "40402")

	// The id is free again: other content is a new plant, and the old
	// content now conflicts with it.
	s.create(t, `{"id":5,"name":"Moss"}`).expect(t, 200, `{"name":"Moss"}`)
	s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`).expectError(t, 409, "40901")
}

func TestDeleteRefusesBadRequests(t *testing.T) {
	s := startServer(t)
	reader := map[string]string{"Authorization": "Bearer " + s.keys.Scoped(t, "plants:read")}
	for _, id := range []string{"abc", "07", "+7", "7.0", "%37", "9223372036854775808", "-", "1%20"} {
		r := s.call(t, "DELETE", "/plants/"+id)
		r.expectError(t, 400, "40002")
		if !strings.Contains(r.body, `"message":"id: must be`) {
			t.Errorf("DELETE /plants/%s: the message must name the id: %s", id, r.body)
		}
	}
	// Authentication and scope come before the id.
	s.do(t, "DELETE", "/plants/abc", nil, nil).expectError(t, 401, "40101")
	r := s.do(t, "DELETE", "/plants/abc", reader, nil)
	r.expectError(t, 403, "40301")
	if got := r.header.Get("WWW-Authenticate"); !strings.Contains(got, `scope="plants:write"`) {
		t.Fatalf("WWW-Authenticate %q must name plants:write", got)
	}
	s.do(t, "DELETE", "/plants/1/leaves", nil, nil).expectError(t, 404, "40401")
}

// Creates and deletes of one id race; every answer is one of the documented
// ones and the id ends stored or absent, never half of either. That the
// stores keep whole states is the store suite's
// KeepsEveryCountUnderRacingCreatesAndDeletes.
func TestCreatesAndDeletesOfOneIDRace(t *testing.T) {
	s := startServer(t)
	tok := s.token(t, nil)
	results := make([]response, 60)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			h := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
			if i%2 == 0 {
				results[i] = s.do(t, "POST", "/plants", h, []byte(`{"id":88,"name":"Basil"}`))
			} else {
				results[i] = s.do(t, "DELETE", "/plants/88", h, nil)
			}
		})
	}
	wg.Wait()
	for i, r := range results {
		switch {
		case i%2 == 0 && r.status == 200 && r.body == `{"name":"Basil"}`:
		case i%2 == 1 && (r.status == 204 || r.status == 404):
		default:
			t.Fatalf("request %d answered %d %s", i, r.status, r.body)
		}
	}
	// Whatever the race left, the next writes see a whole state.
	if r := s.call(t, "DELETE", "/plants/88"); r.status != 204 && r.status != 404 {
		t.Fatalf("delete after the race: %d %s", r.status, r.body)
	}
	s.create(t, `{"id":88,"name":"Mint"}`).expect(t, 200, `{"name":"Mint"}`)
}

// With If-Match, a delete removes only the state whose ETag it lists.
func TestDeleteWithIfMatch(t *testing.T) {
	s := startServer(t)
	tag := s.create(t, `{"id":7,"name":"Monstera"}`).header.Get("ETag")
	auth := "Bearer " + s.token(t, nil)
	for _, stale := range []string{`"stale"`, "W/" + tag, tag[1 : len(tag)-1]} {
		s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-Match": stale}, nil).expectError(t, 412, "41201")
	}
	s.call(t, "GET", "/plants/7").expect(t, 200, `{"id":7,"name":"Monstera"}`)
	s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-Match": `"stale", ` + tag}, nil).expect(t, 204, "")
	// An absent plant is 404 whatever the headers.
	s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-Match": tag}, nil).expectError(t, 404, "40402")
	s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-Match": "*"}, nil).expectError(t, 404, "40402")
	// A changed plant has another ETag; "*" deletes whatever is stored.
	s.create(t, `{"id":7,"name":"Monstera"}`).expect(t, 200, "")
	s.patch(t, "/plants/7", `{"tag":"x"}`, nil).expect(t, 200, "")
	s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-Match": tag}, nil).expectError(t, 412, "41201")
	s.do(t, "DELETE", "/plants/7", map[string]string{"Authorization": auth, "If-Match": "*"}, nil).expect(t, 204, "")
	// Authentication and scope come first.
	s.do(t, "DELETE", "/plants/7", map[string]string{"If-Match": tag}, nil).expectError(t, 401, "40101")
}
