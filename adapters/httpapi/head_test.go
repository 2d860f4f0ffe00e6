package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/application"
)

// A HEAD that is refused answers the status and headers of its GET's
// refusal and no body, as the document's Head* responses declare (each
// answer is checked against them): the challenge of a 401 and a 403, a
// 400 for a parameter, Retry-After with a 503, and a 500.
func TestHeadRefusalsHaveNoBody(t *testing.T) {
	unavailable := seededStore(t)
	unavailable.Inject(func() error { return fmt.Errorf("pool: %w", application.ErrUnavailable) })
	faulty := seededStore(t)
	faulty.Inject(func() error { return errors.New("disk on fire") })
	servers := map[string]*testServer{
		"ok":          startServer(t, withStore(seededStore(t))),
		"unavailable": startServer(t, withStore(unavailable)),
		"faulty":      startServer(t, withStore(faulty)),
	}
	for _, path := range []string{"/plants/1", "/plants"} {
		for _, tc := range []struct {
			name, server string
			token        func(s *testServer) string
			status       int
			header       string // a header the answer must carry
		}{
			{"no token", "ok", func(*testServer) string { return "" }, 401, "WWW-Authenticate"},
			{"expired token", "ok", func(s *testServer) string { return s.keys.Expired(t) }, 401, "WWW-Authenticate"},
			{"without the scope", "ok", func(s *testServer) string { return s.keys.Scoped(t, "plants:write") }, 403, "WWW-Authenticate"},
			{"unavailable", "unavailable", func(s *testServer) string { return s.token(t, nil) }, 503, "Retry-After"},
			{"fault", "faulty", func(s *testServer) string { return s.token(t, nil) }, 500, "X-Request-ID"},
		} {
			t.Run(strings.TrimPrefix(path, "/")+" "+tc.name, func(t *testing.T) {
				s := servers[tc.server]
				h := map[string]string{}
				if tok := tc.token(s); tok != "" {
					h["Authorization"] = "Bearer " + tok
				}
				r := s.do(t, http.MethodHead, path, h, nil)
				if r.status != tc.status || r.body != "" || r.header.Get(tc.header) == "" {
					t.Fatalf("HEAD %s: %d %q %v; want %d with %s and no body", path, r.status, r.body, r.header, tc.status, tc.header)
				}
			})
		}
	}
	s := servers["ok"]
	r := s.do(t, http.MethodHead, "/plants?limit=1001", map[string]string{"Authorization": "Bearer " + s.token(t, nil)}, nil)
	if r.status != 400 || r.body != "" {
		t.Fatalf("HEAD /plants?limit=1001: %d %q; want 400 and no body", r.status, r.body)
	}
}

// The access line of a HEAD counts no body bytes, since none are sent; its
// GET's counts the body.
func TestAHeadsAccessLineCountsNoBody(t *testing.T) {
	s := startServer(t, withStore(seededStore(t)))
	h := map[string]string{"Authorization": "Bearer " + s.token(t, nil)}
	for _, method := range []string{http.MethodHead, http.MethodGet} {
		r := s.do(t, method, "/plants/1", h, nil)
		want := fmt.Sprintf(`"bytes":%d,`, len(r.body))
		if line := s.accessLine(t, r.header.Get("X-Request-ID")); r.status != 200 || !strings.Contains(line, want) {
			t.Errorf("%s /plants/1: %d, access line %s; want %s", method, r.status, line, want)
		}
	}
}
