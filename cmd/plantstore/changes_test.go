package main

import (
	"strings"
	"testing"
)

// Each store, wired into the whole service, changes plants with ETags and
// conditional requests end to end. The contract of each answer is tested in
// adapters/httpapi, and the atomicity of the preconditions, across two
// stores on one database too, by the store suite.
func TestEachStoreChangesEndToEnd(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		s := startService(t, db, nil)
		auth := "Bearer " + s.token(t, nil)
		created := s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`)
		first := created.header.Get("ETag")
		if read := s.call(t, "GET", "/plants/5"); read.header.Get("ETag") != first || first == "" {
			t.Fatalf("create answered ETag %q, the read %q", first, read.header.Get("ETag"))
		}
		s.do(t, "GET", "/plants/5", map[string]string{"Authorization": auth, "If-None-Match": first}, nil).expect(t, 304, "")

		patch := func(ifMatch, body string) answer {
			return s.do(t, "PATCH", "/plants/5", map[string]string{
				"Authorization": auth, "Content-Type": "application/merge-patch+json", "If-Match": ifMatch,
			}, []byte(body))
		}
		changed := patch(first, `{"name":"Moss"}`)
		changed.expect(t, 200, `{"id":5,"name":"Moss","tag":"shade"}`)
		second := changed.header.Get("ETag")
		patch(first, `{"tag":null}`).expectError(t, 412, "41201")
		s.call(t, "GET", "/plants/5").expect(t, 200, `{"id":5,"name":"Moss","tag":"shade"}`)
		// A replay compares with the plant as it is now.
		s.create(t, `{"id":5,"name":"Fern","tag":"shade"}`).expectError(t, 409, "40901")
		if r := s.create(t, `{"id":5,"name":"Moss","tag":"shade"}`); r.status != 200 || r.header.Get("ETag") != second {
			t.Fatalf("replay of the changed plant: %d ETag %q; want 200 with %q", r.status, r.header.Get("ETag"), second)
		}
		s.do(t, "DELETE", "/plants/5", map[string]string{"Authorization": auth, "If-Match": first}, nil).expectError(t, 412, "41201")
		s.do(t, "DELETE", "/plants/5", map[string]string{"Authorization": auth, "If-Match": second}, nil).expect(t, 204, "")
		patch("*", `{}`).expectError(t, 404, "40402")

		m := s.adminGet(t, "/metrics").body
		for _, want := range []string{
			`plantstore_plant_operations_total{operation="change",outcome="changed"} 1`,
			`plantstore_plant_operations_total{operation="change",outcome="precondition_failed"} 1`,
			`plantstore_plant_operations_total{operation="change",outcome="not_found"} 1`,
			`plantstore_plant_operations_total{operation="delete",outcome="precondition_failed"} 1`,
		} {
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	})
}
