package referencetest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
)

// spy notes a test's errors instead of failing it.
type spy struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (s *spy) Errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors = append(s.errors, fmt.Sprintf(format, args...))
}

// What a page does wrong, a clean run reports: a console error, a request
// to another host and its failed load, a resource that is not found.
func TestACleanRunReportsWhatThePageDidWrong(t *testing.T) {
	path := Find(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>page</title><p id="done">done</p>
<script>console.error("boom"); fetch("/missing"); fetch("http://other.invalid/x")</script>`)
	}))
	defer srv.Close()
	b := Start(t, path, srv.URL)
	b.do(t, "open", chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.ID("done")))
	s := &spy{TB: t}
	var last string
	if !assert.Eventually(t, func() bool {
		s.mu.Lock()
		s.errors = nil
		s.mu.Unlock()
		b.ExpectCleanRun(s)
		s.mu.Lock()
		defer s.mu.Unlock()
		all := strings.Join(s.errors, "\n")
		last = all
		return strings.Contains(all, `console.error: "boom"`) && strings.Contains(all, "request to another host: GET http://other.invalid/x") &&
			strings.Contains(all, "load failed: http://other.invalid/x") && strings.Contains(all, "404 (Not Found) "+srv.URL+"/missing")
	}, time.Minute, 20*time.Millisecond) {
		s.mu.Lock()
		defer s.mu.Unlock()
		t.Logf("the problems reported: %s", last)
	}
}
