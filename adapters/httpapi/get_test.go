package httpapi

import (
	"strings"
	"testing"
)

func TestGetPlant(t *testing.T) {
	s := startServer(t)
	s.create(t, `{"id":-7,"name":"Ficus \u00e9l\u00e1stica","tag":"  tree  "}`).expect(t, 200, "")
	s.create(t, `{"id":9223372036854775807,"name":"Aloe"}`).expect(t, 200, "")

	s.call(t, "GET", "/plants/-7").expect(t, 200, `{"id":-7,"name":"Ficus élástica","tag":"  tree  "}`)
	s.call(t, "GET", "/plants/9223372036854775807").expect(t, 200, `{"id":9223372036854775807,"name":"Aloe"}`)
	r := s.call(t, "GET", "/plants/8")
	r.expectError(t, 404, "40402")
	if !strings.Contains(r.body, `"message":"no plant with id 8"`) {
		t.Fatalf("the message must name the id: %s", r.body)
	}
	// A deleted plant is gone; its id holds the next create.
	s.call(t, "DELETE", "/plants/-7").expect(t, 204, "")
	s.call(t, "GET", "/plants/-7").expectError(t, 404, "40402")
	s.create(t, `{"id":-7,"name":"Moss"}`).expect(t, 200, "")
	s.call(t, "GET", "/plants/-7").expect(t, 200, `{"id":-7,"name":"Moss"}`)
}

func TestGetRefusesBadRequests(t *testing.T) {
	s := startServer(t)
	for _, id := range []string{"abc", "01", "+1", "1e3", "0x10", "%31", "-9223372036854775809", "1%2F2"} {
		r := s.call(t, "GET", "/plants/"+id)
		r.expectError(t, 400, "40002")
		if !strings.Contains(r.body, `"message":"id: must be`) {
			t.Errorf("GET /plants/%s: the message must name the id: %s", id, r.body)
		}
	}
	// Authentication and scope come before the id.
	s.do(t, "GET", "/plants/abc", nil, nil).expectError(t, 401, "40101")
	writer := map[string]string{"Authorization": "Bearer " + s.keys.Scoped(t, "plants:write")}
	r := s.do(t, "GET", "/plants/abc", writer, nil)
	r.expectError(t, 403, "40301")
	if got := r.header.Get("WWW-Authenticate"); !strings.Contains(got, `scope="plants:read"`) {
		t.Fatalf("WWW-Authenticate %q must name plants:read", got)
	}
	// With the read scope turned off, any valid token reads.
	open := startServer(t, withReadScope(""))
	open.do(t, "GET", "/plants/1", map[string]string{"Authorization": "Bearer " + open.keys.Scoped(t, "")}, nil).
		expectError(t, 404, "40402")
}

// Only the list takes query parameters; on the other routes any is a 400
// 40002 naming it, and the request changes nothing.
func TestQueryParametersAreRefusedWhereNoneAreTaken(t *testing.T) {
	s := startServer(t)
	s.create(t, `{"id":5,"name":"Fern"}`).expect(t, 200, "")
	writer := map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/json"}
	for _, tt := range []struct {
		method, path, body, message string
	}{
		{"POST", "/plants?dryRun=true", `{"id":6,"name":"Moss"}`, "dryRun: unknown query parameter"},
		{"POST", "/plants?a=1&a=2", `{"id":6,"name":"Moss"}`, "a: unknown query parameter"},
		{"POST", "/plants?dryRun=true", `{"id":6}`, "name: is required; dryRun: unknown query parameter"},
		{"GET", "/plants/5?fields=name", "", "fields: unknown query parameter"},
		{"GET", "/plants/x?y=1", "", "id: must be a decimal integer: an optional -, then digits without leading zeros; y: unknown query parameter"},
		{"DELETE", "/plants/5?force=true", "", "force: unknown query parameter"},
		{"DELETE", "/plants/5?%zz", "", "query: must be correctly percent-encoded"},
	} {
		r := s.do(t, tt.method, tt.path, writer, []byte(tt.body))
		r.expectError(t, 400, "40002")
		if !strings.Contains(r.body, `"message":"`+tt.message+`"`) {
			t.Errorf("%s %s: %s, want the message %q", tt.method, tt.path, r.body, tt.message)
		}
	}
	s.call(t, "GET", "/plants/5").expect(t, 200, `{"id":5,"name":"Fern"}`)
	s.call(t, "GET", "/plants/6").expectError(t, 404, "40402")
	// A body that is not JSON is reported alone, as the check before the
	// fields and parameters.
	s.do(t, "POST", "/plants?dryRun=true", writer, []byte(`{`)).expectError(t, 400, "40001")
}
