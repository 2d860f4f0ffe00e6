package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// Each store, wired into the whole service, changes plants with ETags and
// conditional requests end to end. The contract of each answer is tested in
// adapters/httpapi, the atomicity of the preconditions by the store suite.
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

		patch := func(ifMatch, body string) response {
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

// Two replicas on one PostgreSQL tag a plant alike, and of writers holding
// its ETag, spread over both, exactly one changes it.
func TestTwoReplicasLetOneWriterOfAnETagWin(t *testing.T) {
	db := pgtest.NewDatabase(t)
	replicas := []*service{startService(t, db, nil), startService(t, db, nil)}
	tag := replicas[0].create(t, `{"id":9,"name":"Fern"}`).header.Get("ETag")
	if got := replicas[1].call(t, "GET", "/plants/9").header.Get("ETag"); got != tag {
		t.Fatalf("the second replica tags the plant %q; the first %q", got, tag)
	}
	const writers = 16
	statuses := make([]int, writers)
	tokens := []string{"Bearer " + replicas[0].token(t, nil), "Bearer " + replicas[1].token(t, nil)}
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			s := replicas[i%2]
			req, err := http.NewRequest("PATCH", s.api+"/plants/9", strings.NewReader(`{"name":"Writer `+string(rune('A'+i))+`"}`))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Authorization", tokens[i%2])
			req.Header.Set("Content-Type", "application/merge-patch+json")
			req.Header.Set("If-Match", tag)
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
