package main

import (
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// Each store, wired into the whole service, serves every plant operation end
// to end and answers the admin listener's probes and metrics. The HTTP
// contract itself is tested in adapters/httpapi on the memory store, and
// what the stores guarantee by the store suite, adapters/storetest.
func TestEachStoreEndToEnd(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, nil)
		s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`).expect(t, 200, `{"name":"Fern","tag":"shade"}`)
		s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`).expect(t, 200, `{"name":"Fern","tag":"shade"}`)
		s.create(t, `{"id":5,"name":"Moss"}`).expectError(t, 409, "40901")
		// A token signed by the key of the PEM file is verified as well.
		s.do(t, "POST", "/plants", map[string]string{
			"Authorization": "Bearer " + s.keys.Sign(t, jwt.SigningMethodEdDSA, s.keys.Ed, nil), "Content-Type": "application/json",
		}, []byte(`{"id":-7,"name":"Aloe"}`)).expect(t, 200, `{"name":"Aloe"}`)
		s.do(t, "POST", "/plants", nil, nil).expectError(t, 401, "40101")

		s.call(t, "GET", "/plants/5").expect(t, 200, `{"id":5,"name":"Fern","tag":"shade"}`)
		first := s.call(t, "GET", "/plants?limit=1")
		first.expect(t, 200, `[{"id":-7,"name":"Aloe"}]`)
		if link := first.header.Get("Link"); link != `</plants?limit=1&after=-7>; rel="next"` {
			t.Fatalf("first page Link %q", link)
		}
		s.call(t, "GET", "/plants?limit=1&after=-7").expect(t, 200, `[{"id":5,"name":"Fern","tag":"shade"}]`)
		s.call(t, "GET", "/plants?tag=shade").expect(t, 200, `[{"id":5,"name":"Fern","tag":"shade"}]`)

		s.call(t, "DELETE", "/plants/5").expect(t, 204, "")
		s.call(t, "GET", "/plants/5").expectError(t, 404, "40402")
		s.call(t, "DELETE", "/plants/5").expectError(t, 404, "40402")
		s.create(t, `{"id":5,"name":"Moss"}`).expect(t, 200, `{"name":"Moss"}`)

		s.adminGet(t, "/healthz").expect(t, 200, "")
		s.adminGet(t, "/readyz").expect(t, 200, "")
		m := s.adminGet(t, "/metrics").body
		for _, want := range []string{
			`plantstore_http_requests_total{method="POST",route="/plants",status="200"} 4`,
			`plantstore_plant_operations_total{operation="create",outcome="created"} 3`,
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
