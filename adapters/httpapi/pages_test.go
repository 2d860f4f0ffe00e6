package httpapi

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// item is a plant as reads and lists answer it.
type item struct {
	ID   int64   `json:"id"`
	Name string  `json:"name"`
	Tag  *string `json:"tag"`
}

// nextPage returns the target of a response's rel="next" Link, or "".
func nextPage(t *testing.T, r response) string {
	t.Helper()
	link := r.header.Get("Link")
	if link == "" {
		return ""
	}
	target, ok := strings.CutSuffix(link, `>; rel="next"`)
	if !ok || !strings.HasPrefix(target, "</plants?") {
		t.Fatalf("Link %q is not a next link to /plants", link)
	}
	return target[1:]
}

// page lists path and decodes the items.
func (s *testServer) page(t *testing.T, path string) ([]item, response) {
	t.Helper()
	r := s.call(t, "GET", path)
	if r.status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	var items []item
	if err := json.Unmarshal([]byte(r.body), &items); err != nil || items == nil {
		t.Fatalf("GET %s: %s is not a JSON array: %v", path, r.body, err)
	}
	return items, r
}

func TestListPlants(t *testing.T) {
	s := startServer(t)
	if r := s.call(t, "GET", "/plants"); r.body != "[]" || r.header.Get("Link") != "" {
		t.Fatalf("an empty store lists %d %s, Link %q", r.status, r.body, r.header.Get("Link"))
	}
	for _, body := range []string{
		`{"id":9223372036854775807,"name":"Max","tag":"fern"}`,
		`{"id":3,"name":"Three"}`,
		`{"id":-9223372036854775808,"name":"Min","tag":"fern"}`,
		`{"id":0,"name":"Zero","tag":"Fern"}`,
		`{"id":-5,"name":"  spaced  ","tag":"fern"}`,
	} {
		s.create(t, body).expect(t, 200, "")
	}
	r := s.call(t, "GET", "/plants")
	want := `[{"id":-9223372036854775808,"name":"Min","tag":"fern"},{"id":-5,"name":"  spaced  ","tag":"fern"},` +
		`{"id":0,"name":"Zero","tag":"Fern"},{"id":3,"name":"Three"},{"id":9223372036854775807,"name":"Max","tag":"fern"}]`
	r.expect(t, 200, want)
	if r.header.Get("Link") != "" {
		t.Fatalf("a whole list has Link %q", r.header.Get("Link"))
	}

	// Pages of two, linked until the last; the last full page has no
	// link when nothing follows it.
	var ids []int64
	path := "/plants?limit=2"
	for pages := 0; path != ""; pages++ {
		items, r := s.page(t, path)
		for _, it := range items {
			ids = append(ids, it.ID)
		}
		path = nextPage(t, r)
		if pages == 0 && path != "/plants?limit=2&after=-5" {
			t.Fatalf("first page links to %q", path)
		}
	}
	if fmt.Sprint(ids) != "[-9223372036854775808 -5 0 3 9223372036854775807]" {
		t.Fatalf("walked ids %v", ids)
	}
	items, r := s.page(t, "/plants?limit=4&after=-9223372036854775808")
	if len(items) != 4 || r.header.Get("Link") != "" {
		t.Fatalf("a last page that is full: %d items, Link %q", len(items), r.header.Get("Link"))
	}

	// The tag filter is exact and kept in the link.
	items, r = s.page(t, "/plants?tag=fern&limit=1")
	if len(items) != 1 || items[0].Name != "Min" || nextPage(t, r) != "/plants?limit=1&after=-9223372036854775808&tag=fern" {
		t.Fatalf("tag page %v, Link %q", items, r.header.Get("Link"))
	}
	items, _ = s.page(t, nextPage(t, r))
	if len(items) != 1 || items[0].ID != -5 {
		t.Fatalf("second tag page %v", items)
	}
	items, _ = s.page(t, "/plants?tag="+url.QueryEscape("Fern"))
	if len(items) != 1 || items[0].ID != 0 {
		t.Fatalf("tag Fern lists %v", items)
	}
	s.call(t, "GET", "/plants?after=9223372036854775807").expect(t, 200, "[]")
}

func TestListRefusesBadRequests(t *testing.T) {
	s := startServer(t)
	for query, message := range map[string]string{
		"limit=0":         "limit: must be a whole number between 1 and 1000",
		"limit=1001":      "limit: must be a whole number between 1 and 1000",
		"limit=ten":       "limit: must be a whole number between 1 and 1000",
		"after=01":        "after: must be a decimal integer",
		"tag=":            "tag: must not be empty",
		"limit=1&limit=2": "limit: must be given at most once",
		"page=2":          "page: unknown query parameter",
	} {
		r := s.call(t, "GET", "/plants?"+query)
		r.expectError(t, 400, "40002")
		if !strings.Contains(r.body, `"message":"`+message) {
			t.Errorf("?%s: %s, want the message %q", query, r.body, message)
		}
	}
	// Authentication and scope come before the query.
	s.do(t, "GET", "/plants?limit=0", nil, nil).expectError(t, 401, "40101")
	writer := map[string]string{"Authorization": "Bearer " + s.keys.Scoped(t, "plants:write")}
	r := s.do(t, "GET", "/plants?limit=0", writer, nil)
	r.expectError(t, 403, "40301")
	if got := r.header.Get("WWW-Authenticate"); !strings.Contains(got, `scope="plants:read"`) {
		t.Fatalf("WWW-Authenticate %q must name plants:read", got)
	}
}

// A client walks the pages by their links while other clients create and
// delete plants between the stable ones: every stable plant is listed
// exactly once, in ascending order. The stores' side of it is the store
// suite's WalksEveryStablePlantOnceWhileOthersChange.
func TestPaginationWalkUnderConcurrentCreatesAndDeletes(t *testing.T) {
	s := startServer(t)
	const stable = 120
	for i := range stable {
		s.create(t, fmt.Sprintf(`{"id":%d,"name":"stable"}`, 10*i)).expect(t, 200, "")
	}
	tok := s.token(t, nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			h := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := 10*rng.IntN(stable+2) + 1 + rng.IntN(9) // never a stable id
				var r response
				if rng.IntN(2) == 0 {
					r = s.do(t, "POST", "/plants", h, []byte(fmt.Sprintf(`{"id":%d,"name":"churn"}`, id)))
				} else {
					r = s.do(t, "DELETE", fmt.Sprintf("/plants/%d", id), h, nil)
				}
				if r.status >= 500 {
					t.Errorf("churn answered %d %s", r.status, r.body)
					return
				}
			}
		})
	}
	seen := map[int64]int{}
	last := int64(-1 << 63)
	for path := "/plants?limit=7"; path != ""; {
		items, r := s.page(t, path)
		for _, it := range items {
			if it.ID <= last && len(seen) > 0 {
				t.Fatalf("id %d listed after %d", it.ID, last)
			}
			last = it.ID
			seen[it.ID]++
		}
		path = nextPage(t, r)
	}
	close(stop)
	wg.Wait()
	for i := range stable {
		if seen[int64(10*i)] != 1 {
			t.Errorf("stable plant %d listed %d times", 10*i, seen[int64(10*i)])
		}
	}
}
