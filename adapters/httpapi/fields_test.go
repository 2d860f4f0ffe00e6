package httpapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"testing"
)

// Every field the document gives a plant goes through the API: a create
// with every member of NewPlant reads back with each, a change of every
// member of PlantPatch reads back with each, and one that sets every member
// that takes null to null reads back without them. The bodies come from
// the document's examples (openapitest.Instance), so that a field added to
// the document is sent here, and fails here until the API carries it.
func TestEveryFieldOfAPlantGoesThroughTheAPI(t *testing.T) {
	s := startServer(t)
	created, _ := s.contract.Instance(t, "NewPlant")
	created["id"] = 7
	s.create(t, mustJSON(t, created)).expect(t, 200, "")
	expectPlant(t, s, created)

	change, nullable := s.contract.Instance(t, "PlantPatch")
	for k, v := range change {
		if str, ok := v.(string); ok {
			change[k] = str + " changed"
		}
	}
	s.patch(t, "/plants/7", mustJSON(t, change), nil).expect(t, 200, "")
	want := maps.Clone(created)
	maps.Copy(want, change)
	expectPlant(t, s, want)

	cleared := map[string]any{}
	for _, k := range nullable {
		cleared[k] = nil
		delete(want, k)
	}
	s.patch(t, "/plants/7", mustJSON(t, cleared), nil).expect(t, 200, "")
	expectPlant(t, s, want)
}

// expectPlant reads plant 7, through a read and a list, and fails t unless
// it is want, member for member.
func expectPlant(t *testing.T, s *testServer, want map[string]any) {
	t.Helper()
	read := s.call(t, http.MethodGet, "/plants/7")
	read.expect(t, 200, "")
	list := s.call(t, http.MethodGet, "/plants?limit=1&after=6")
	list.expect(t, 200, "")
	wantJSON := mustJSON(t, want)
	for _, got := range []string{read.body, list.body[1 : len(list.body)-1]} {
		var member map[string]any
		if err := json.Unmarshal([]byte(got), &member); err != nil {
			t.Fatal(err)
		}
		if gotJSON := mustJSON(t, member); gotJSON != wantJSON {
			t.Errorf("plant 7 reads %s; want %s", gotJSON, wantJSON)
		}
	}
}

// mustJSON is v as JSON, its object members sorted, so that two objects
// compare as text.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(fmt.Errorf("%v: %w", v, err))
	}
	return string(b)
}
