package httpapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
)

// event is one event as the feed answers it.
type event struct {
	ID     string    `json:"id"`
	Type   string    `json:"type"`
	Number int64     `json:"number"`
	Time   time.Time `json:"time"`
	Plant  item      `json:"plant"`
}

// eventsPage reads one page of the feed, which must carry a next link, and
// returns its events and that link's target.
func (s *testServer) eventsPage(t *testing.T, path string) ([]event, string) {
	t.Helper()
	r := s.call(t, "GET", path)
	if r.status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	var events []event
	if err := json.Unmarshal([]byte(r.body), &events); err != nil || events == nil {
		t.Fatalf("GET %s: %s is not a JSON array: %v", path, r.body, err)
	}
	link := r.header.Get("Link")
	target, ok := strings.CutSuffix(link, `>; rel="next"`)
	if !ok || !strings.HasPrefix(target, "</events?limit=") {
		t.Fatalf("GET %s: Link %q is not a next link to /events", path, link)
	}
	return events, target[1:]
}

func TestEventFeed(t *testing.T) {
	s := startServer(t)
	events, next := s.eventsPage(t, "/events")
	if len(events) != 0 || !strings.HasPrefix(next, "/events?limit=100&after=") {
		t.Fatalf("an empty feed: %v, next %s", events, next)
	}
	s.create(t, `{"id":1,"name":"Aloe"}`).expect(t, 200, "")
	s.create(t, `{"id":2,"name":"Basil","tag":"herb"}`).expect(t, 200, "")
	s.create(t, `{"id":1,"name":"Aloe"}`).expect(t, 200, "") // a replay: no event
	s.do(t, "PATCH", "/plants/1", map[string]string{"Authorization": "Bearer " + s.token(t, nil), "Content-Type": "application/json"},
		[]byte(`{"tag":"succulent"}`)).expect(t, 200, "")
	s.call(t, "DELETE", "/plants/2").expect(t, 204, "")
	s.call(t, "DELETE", "/plants/2").expectError(t, 404, "40402") // nothing removed: no event

	// Pages of two from the start, then from the empty page's link.
	var all []event
	path := "/events?limit=2"
	for pages := 0; ; pages++ {
		events, next := s.eventsPage(t, path)
		all = append(all, events...)
		if len(events) == 0 {
			if pages != 2 {
				t.Fatalf("the walk ended after %d pages, want 2 and an empty one", pages)
			}
			path = next
			break
		}
		path = next
	}
	want := []string{"plant.created 1 Aloe -", "plant.created 2 Basil herb", "plant.changed 1 Aloe succulent", "plant.deleted 2 Basil herb"}
	if len(all) != len(want) {
		t.Fatalf("the feed holds %d events, want %d: %+v", len(all), len(want), all)
	}
	for i, e := range all {
		tag := "-"
		if e.Plant.Tag != nil {
			tag = *e.Plant.Tag
		}
		if got := strings.Join([]string{e.Type, jsonNumber(e.Plant.ID), e.Plant.Name, tag}, " "); got != want[i] {
			t.Errorf("event %d is %s, want %s", i, got, want[i])
		}
		if e.ID == "" || e.Time.IsZero() || i > 0 && e.Number <= all[i-1].Number {
			t.Errorf("event %d: id %q, time %s, number %d after %d", i, e.ID, e.Time, e.Number, all[max(i-1, 0)].Number)
		}
	}
	// The last link, read again, returns what was committed since.
	if events, again := s.eventsPage(t, path); len(events) != 0 || again == "" {
		t.Fatalf("the last link read again before any write: %+v", events)
	}
	s.create(t, `{"id":3,"name":"Cress"}`).expect(t, 200, "")
	if events, _ := s.eventsPage(t, path); len(events) != 1 || events[0].Type != "plant.created" || events[0].Plant.ID != 3 {
		t.Fatalf("the last link read again after a create: %+v", events)
	}
	// HEAD answers the same headers.
	r := s.do(t, "HEAD", "/events?limit=2", map[string]string{"Authorization": "Bearer " + s.token(t, nil)}, nil)
	if r.status != 200 || r.body != "" || !strings.HasPrefix(r.header.Get("Link"), "</events?limit=2&after=") {
		t.Fatalf("HEAD /events: %d %q, Link %q", r.status, r.body, r.header.Get("Link"))
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestEventFeedRefusals(t *testing.T) {
	store := memory.New()
	s := startServer(t, withStore(store))
	_, next := s.eventsPage(t, "/events")
	cursor := next[strings.Index(next, "after=")+len("after="):]
	for query, message := range map[string]string{
		"limit=0":                              "limit: must be a whole number between 1 and 1000",
		"limit=1001":                           "limit: must be a whole number between 1 and 1000",
		"limit=x":                              "limit: must be a whole number between 1 and 1000",
		"after=" + cursor + "x":                "after: must be a cursor from a Link of this feed",
		"after=" + cursor[:len(cursor)-1]:      "after: must be a cursor from a Link of this feed",
		"after=":                               "after: must be a cursor from a Link of this feed",
		"after=7":                              "after: must be a cursor from a Link of this feed",
		"after=" + cursor + "&after=" + cursor: "after: must be given at most once",
		"tag=herb":                             "tag: unknown query parameter",
	} {
		r := s.call(t, "GET", "/events?"+query)
		r.expectError(t, 400, "40002")
		var body struct{ Message string }
		_ = json.Unmarshal([]byte(r.body), &body)
		if body.Message != message {
			t.Errorf("GET /events?%s: %q, want %q", query, body.Message, message)
		}
	}
	s.do(t, "GET", "/events", nil, nil).expectError(t, 401, "40101")
	r := s.do(t, "GET", "/events", map[string]string{"Authorization": "Bearer " + s.keys.Scoped(t, "plants:write")}, nil)
	r.expectError(t, 403, "40301")
	if got := r.header.Get("WWW-Authenticate"); !strings.Contains(got, `scope="plants:read"`) {
		t.Fatalf("403 WWW-Authenticate %q", got)
	}

	// A cursor handed out longer ago than the retention is gone, and so is
	// one that pruned events followed.
	old := formatCursor(application.FeedPosition{At: time.Now().Add(-169 * time.Hour)})
	s.call(t, "GET", "/events?after="+old).expectError(t, 410, "41001")
	s.create(t, `{"id":1,"name":"Aloe"}`).expect(t, 200, "")
	s.create(t, `{"id":2,"name":"Basil"}`).expect(t, 200, "")
	if n, err := store.PruneEvents(context.Background(), 0, 1); err != nil || n != 1 {
		t.Fatalf("PruneEvents = %d, %v", n, err)
	}
	s.call(t, "GET", "/events?after="+cursor).expectError(t, 410, "41001")
	if events, _ := s.eventsPage(t, "/events"); len(events) != 1 || events[0].Plant.ID != 2 {
		t.Fatalf("the feed after pruning: %+v", events)
	}
}

// A cursor has one spelling, and reads back as the position it was made
// of, to the microsecond.
func TestCursorsRoundTrip(t *testing.T) {
	for _, p := range []application.FeedPosition{
		{At: time.UnixMicro(0)},
		{Tx: 1<<64 - 1, Number: 1<<63 - 1, At: time.UnixMicro(1<<62 + 7)},
		{Tx: 741, Number: 1045, At: time.UnixMicro(1795430400_123456)},
		{Tx: 1, Number: 2, At: time.UnixMicro(-5)},
	} {
		c := formatCursor(p)
		got, ok := parseCursor(c)
		if !ok || got != p {
			t.Errorf("parseCursor(formatCursor(%+v)) = %+v, %v", p, got, ok)
		}
	}
	c := formatCursor(application.FeedPosition{Tx: 9, Number: 3, At: time.Unix(1, 0)})
	for _, bad := range []string{"", c + "A", c[:len(c)-1], c[:len(c)-1] + "B", strings.ToUpper(c),
		"AQAAAAAAAAAJAAAAAAAAAAMAAAAAAAAAAQ"} { // the first version, without a checksum
		if _, ok := parseCursor(bad); ok && bad != c {
			t.Errorf("parseCursor(%q) accepted", bad)
		}
	}
}

// A cursor damaged anywhere, one character changed into any other, is no
// cursor: read as one, it would go on from another position, skipping
// events or waiting past the end of the feed for ever.
func TestADamagedCursorIsRefused(t *testing.T) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	c := formatCursor(application.FeedPosition{Tx: 8123456, Number: 1045, At: time.UnixMicro(1795430400_123456)})
	for i := range len(c) {
		for _, r := range alphabet {
			if byte(r) == c[i] {
				continue
			}
			bad := c[:i] + string(r) + c[i+1:]
			if p, ok := parseCursor(bad); ok {
				t.Fatalf("parseCursor(%q), %q with character %d changed, = %+v", bad, c, i, p)
			}
		}
	}
}
