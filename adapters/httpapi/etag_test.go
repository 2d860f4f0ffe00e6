package httpapi

import (
	"net/http"
	"testing"
)

// Every answer that carries a plant carries the strong ETag of its stored
// state: the same for the same state, from any server, and different for a
// different state.
func TestAnswersWithAPlantCarryItsETag(t *testing.T) {
	s := startServer(t)
	created := s.create(t, `{"id":7,"name":"Monstera","tag":"aroid"}`)
	created.expect(t, 200, `{"name":"Monstera","tag":"aroid"}`)
	tag := created.header.Get("ETag")
	// The ETag is a hash of the PlantItem JSON, pinned so that a change of
	// it (which every client's cached tag would miss) is a visible choice.
	if tag != `"gAmCewhT9YIIjLAHv8FH0g"` {
		t.Fatalf("create answered ETag %q", tag)
	}
	replay := s.create(t, `{"id":7,"name":"Monstera","tag":"aroid"}`)
	read := s.call(t, "GET", "/plants/7")
	head := s.call(t, "HEAD", "/plants/7")
	for name, r := range map[string]response{"replay": replay, "read": read, "head": head} {
		if got := r.header.Get("ETag"); r.status != 200 || got != tag {
			t.Errorf("%s answered %d with ETag %q; want 200 with %q", name, r.status, got, tag)
		}
	}
	// Another server (a replica, or this one after a restart) tags the
	// same state alike.
	other := startServer(t)
	if got := other.create(t, `{"id":7,"name":"Monstera","tag":"aroid"}`).header.Get("ETag"); got != tag {
		t.Errorf("another server tags the same plant %q; want %q", got, tag)
	}
	// A different state has a different tag, the id included.
	seen := map[string]string{tag: "7 Monstera aroid"}
	for _, body := range []string{`{"id":8,"name":"Monstera","tag":"aroid"}`, `{"id":9,"name":"Monstera"}`, `{"id":10,"name":"Monstera","tag":"Aroid"}`} {
		got := s.create(t, body).header.Get("ETag")
		if prev, dup := seen[got]; dup {
			t.Errorf("%s has the ETag of %s: %q", body, prev, got)
		}
		seen[got] = body
	}
}

// A read with If-None-Match listing the stored state's ETag answers 304 with
// the ETag and no body; any other list answers the plant.
func TestReadWithIfNoneMatch(t *testing.T) {
	s := startServer(t)
	tag := s.create(t, `{"id":7,"name":"Monstera"}`).header.Get("ETag")
	auth := "Bearer " + s.token(t, nil)
	for _, tt := range []struct {
		name, inm string
		status    int
	}{
		{"its tag", tag, 304},
		{"in a list", `"other", ` + tag + `,"more"`, 304},
		{"without spaces", `"other",` + tag, 304},
		{"any", "*", 304},
		{"weak form", "W/" + tag, 304},
		{"another tag", `"other"`, 200},
		{"unquoted", tag[1 : len(tag)-1], 200},
		{"empty", "", 200},
		// A value that is not "*" or a list of entity-tags names no state:
		// the read answers the plant rather than a 304 nobody asked for.
		{"garbage then the tag", `x ` + tag, 200},
		{"the tag then garbage", tag + `x`, 200},
		{"any beside the tag", `*, ` + tag, 200},
	} {
		for _, method := range []string{"GET", "HEAD"} {
			r := s.do(t, method, "/plants/7", map[string]string{"Authorization": auth, "If-None-Match": tt.inm}, nil)
			if r.status != tt.status || r.header.Get("ETag") != tag {
				t.Errorf("%s with If-None-Match %s (%q): %d ETag %q; want %d with %q", method, tt.name, tt.inm, r.status, r.header.Get("ETag"), tt.status, tag)
			}
			if r.status == 304 && (r.body != "" || r.header.Get("Content-Type") != "") {
				t.Errorf("%s %s: a 304 with a body or a content type: %q %q", method, tt.name, r.body, r.header.Get("Content-Type"))
			}
		}
	}
	// Two header lines are one list.
	h := http.Header{"Authorization": {auth}, "If-None-Match": {`"other"`, tag}}
	if r := s.send(t, s.request(t, "GET", "/plants/7", h, nil)); r.status != 304 {
		t.Errorf("If-None-Match over two lines: %d; want 304", r.status)
	}
	// Authentication and scope come first, and an absent plant matches
	// nothing.
	s.do(t, "GET", "/plants/7", map[string]string{"If-None-Match": "*"}, nil).expectError(t, 401, "40101")
	writer := "Bearer " + s.keys.Scoped(t, "plants:write")
	s.do(t, "GET", "/plants/7", map[string]string{"Authorization": writer, "If-None-Match": tag}, nil).expectError(t, 403, "40301")
	s.do(t, "GET", "/plants/8", map[string]string{"Authorization": auth, "If-None-Match": "*"}, nil).expectError(t, 404, "40402")
	// A changed state answers the plant with its new tag.
	s.call(t, "DELETE", "/plants/7").expect(t, 204, "")
	s.create(t, `{"id":7,"name":"Moss"}`).expect(t, 200, "")
	r := s.do(t, "GET", "/plants/7", map[string]string{"Authorization": auth, "If-None-Match": tag}, nil)
	r.expect(t, 200, `{"id":7,"name":"Moss"}`)
	if r.header.Get("ETag") == tag {
		t.Errorf("a new state kept the old ETag %q", tag)
	}
}

func TestETagListed(t *testing.T) {
	const tag = `"abc"`
	for _, tt := range []struct {
		values       []string
		weak         bool
		found, valid bool
	}{
		{[]string{`"abc"`}, false, true, true},
		{[]string{`W/"abc"`}, true, true, true},
		{[]string{`W/"abc"`}, false, false, true},
		{[]string{` "x" ,  "abc" `}, false, true, true},
		{[]string{`"x"`, `"abc"`}, false, true, true},
		{[]string{`, "abc",,`}, false, true, true},
		{[]string{`"a,b"`, `"abc"`}, false, true, true}, // a comma inside a tag
		{[]string{`*`}, false, true, true},
		{[]string{` * `}, false, true, true},
		{[]string{`"abcd"`}, false, false, true},
		{[]string{`""`}, false, false, true},
		{[]string{``}, false, false, true}, // an empty list
		{[]string{` , `}, false, false, true},
		// Not a field of "*" or entity-tags: nothing is listed.
		{[]string{`"x", *`}, false, false, false},
		{[]string{`"x"`, `*`}, false, false, false},
		{[]string{`*, *`}, false, false, false},
		{[]string{`*junk`}, false, false, false},
		{[]string{`"abc"junk`}, false, false, false},
		{[]string{`"abc" junk`}, false, false, false},
		{[]string{`"abc" "x"`}, false, false, false},
		{[]string{`"ab"c"`}, false, false, false},
		{[]string{`abc`}, false, false, false},
		{[]string{`"abc`}, false, false, false},
		{[]string{`"a bc"`}, false, false, false},
		{[]string{`w/"abc"`}, true, false, false},
		{[]string{`"x" junk "abc"`}, false, false, false},
	} {
		if found, valid := etagListed(tt.values, tag, tt.weak); found != tt.found || valid != tt.valid {
			t.Errorf("etagListed(%q, weak %v) = %v, %v; want %v, %v", tt.values, tt.weak, found, valid, tt.found, tt.valid)
		}
	}
}
