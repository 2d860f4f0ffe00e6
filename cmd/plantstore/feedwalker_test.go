package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// httpFeedWalker reads GET /events to its end again and again, following
// each page's Link rel="next", as a reader at the head does, across
// whatever the cluster goes through: a page answered 503 is asked again.
type httpFeedWalker struct {
	s     *service
	token string

	mu     sync.Mutex
	next   string   // the path of the page to read next
	events []string // the ids of the events read, in order
	faults []string // answers other than 200 or 503 50301
}

// walkerLimit is the size of a walker's pages: small, so that pages follow
// one another at the head.
const walkerLimit = 20

// walk reads from the feed's start until ctx ends, then to its end.
func (w *httpFeedWalker) walk(ctx context.Context, t *testing.T) {
	w.next = fmt.Sprintf("/events?limit=%d", walkerLimit)
	for ctx.Err() == nil {
		if link, _, ok := w.page(t, w.next); ok {
			w.next = link
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	w.toEnd(t)
}

// toEnd reads on until a page is not full.
func (w *httpFeedWalker) toEnd(t *testing.T) {
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
		link, n, ok := w.page(t, w.next)
		if ok {
			w.next = link
		}
		if ok && n < walkerLimit {
			return
		}
	}
	w.fault("the walker never reached the feed's end")
}

// page reads the page at path and keeps its events: it returns the path of
// the next page, how many events it read, and whether it read a page.
func (w *httpFeedWalker) page(t *testing.T, path string) (string, int, bool) {
	a := w.s.do(t, http.MethodGet, path, map[string]string{"Authorization": "Bearer " + w.token}, nil)
	if a.unavailable() {
		return path, 0, false
	}
	if a.err != nil || a.status != http.StatusOK {
		w.fault(fmt.Sprintf("GET %s: %s", path, a))
		return path, 0, false
	}
	ids, err := pageEventIDs(a.body)
	next, ok := nextLink(a.header.Get("Link"))
	if err != nil || !ok {
		w.fault(fmt.Sprintf("GET %s: a page without its events or its next link: %s", path, a))
		return path, 0, false
	}
	w.mu.Lock()
	w.events = append(w.events, ids...)
	w.mu.Unlock()
	return next, len(ids), true
}

func (w *httpFeedWalker) fault(f string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.faults = append(w.faults, f)
}

// pageEventIDs are the ids of the events of a page's body.
func pageEventIDs(body string) ([]string, error) {
	var events []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(body), &events); err != nil {
		return nil, err
	}
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	return ids, nil
}

// nextLink is the path and query of a Link header's rel="next".
func nextLink(header string) (string, bool) {
	for part := range strings.SplitSeq(header, ",") {
		target, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.Contains(params, `rel="next"`) {
			continue
		}
		u, err := url.Parse(strings.Trim(target, "<>"))
		if err != nil {
			return "", false
		}
		return u.RequestURI(), true
	}
	return "", false
}

// checkFeedWalkers compares what each walker read, across the faults, with
// the feed that s serves once the cluster is whole, read from its start in
// one go: the same events in the same order, none skipped, none twice, and
// none that a failover lost. A write answered 503 may still commit after
// the walkers' last page (its statement goes on), so each walker reads on
// to the end again until it and the feed agree, or part.
func checkFeedWalkers(t *testing.T, s *service, token string, walkers []*httpFeedWalker) {
	t.Helper()
	for range 50 {
		for _, w := range walkers {
			w.toEnd(t)
		}
		truth := feedTruth(t, s, token)
		behind := false
		for i, w := range walkers {
			w.mu.Lock()
			for _, f := range w.faults {
				t.Errorf("walker %d: %s", i, f)
			}
			switch {
			case slices.Equal(w.events, truth):
			case len(w.events) < len(truth) && slices.Equal(w.events, truth[:len(w.events)]):
				behind = true // events committed since its last page
			default:
				t.Errorf("walker %d read %d events, the feed holds %d: %s", i, len(w.events), len(truth), firstApart(w.events, truth))
			}
			w.mu.Unlock()
		}
		if t.Failed() || !behind {
			t.Logf("%d walkers each read the %d events of the feed, in its order", len(walkers), len(truth))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Error("the walkers never caught up with the feed")
}

// feedTruth is every event of the feed s serves, read from its start in
// pages of 1,000.
func feedTruth(t *testing.T, s *service, token string) []string {
	t.Helper()
	truth := &httpFeedWalker{s: s, token: token}
	for next := "/events?limit=1000"; ; {
		link, n, ok := truth.page(t, next)
		if !ok {
			t.Fatalf("the feed's truth could not be read: %v", truth.faults)
		}
		if n < 1000 {
			return truth.events
		}
		next = link
	}
}

// firstApart describes where read and truth part.
func firstApart(read, truth []string) string {
	for i := range min(len(read), len(truth)) {
		if read[i] != truth[i] {
			return fmt.Sprintf("at %d the walker read %s where the feed has %s", i, read[i], truth[i])
		}
	}
	return "one is the start of the other"
}
