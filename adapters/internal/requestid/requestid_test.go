package requestid

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestSaneIDsAreShortTokensOfSafeCharacters(t *testing.T) {
	for _, id := range []string{"a", "trace-1", "Z9_.:/+=", strings.Repeat("x", 128)} {
		if !sane(id) {
			t.Errorf("sane(%q) = false", id)
		}
	}
	for _, id := range []string{"", strings.Repeat("x", 129), "a b", `"q"`, "ünï", "<s>", "a\nb", "a;b"} {
		if sane(id) {
			t.Errorf("sane(%q) = true", id)
		}
	}
}

func TestAssignEchoesASaneIDAndReplacesAnyOther(t *testing.T) {
	s := NewSource()
	assign := func(sent string) (string, string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if sent != "" {
			r.Header.Set(Header, sent)
		}
		w := httptest.NewRecorder()
		id := s.Assign(w, r)
		return id, w.Header().Get(Header)
	}
	if id, header := assign("client-7"); id != "client-7" || header != "client-7" {
		t.Errorf("sane id: assigned %q, header %q", id, header)
	}
	for _, sent := range []string{"", "a b", strings.Repeat("y", 200)} {
		if id, header := assign(sent); id == sent || id != header || !sane(id) {
			t.Errorf("sent %q: assigned %q, header %q", sent, id, header)
		}
	}
}

func TestIDsAreUniqueAcrossSourcesAndGoroutines(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		wg   sync.WaitGroup
	)
	for range 4 {
		s := NewSource()
		for range 4 {
			wg.Go(func() {
				for range 1000 {
					id := s.New()
					mu.Lock()
					if seen[id] {
						t.Errorf("%s minted twice", id)
					}
					seen[id] = true
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
}
