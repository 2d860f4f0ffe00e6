package postgres

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
)

// An event stored by a binary that knows nothing of feed lines (the
// previous release, or a statement written around the service) is read
// from its line all the same, with the time it was committed at.
func TestAnEventStoredWithoutItsLineIsRead(t *testing.T) {
	s, _ := newStore(t)
	const item = `{"id":7,"name":"Fern \"x\" y","tag":"a b"}`
	var committed time.Time
	if err := s.db.Get(&committed, `INSERT INTO plant_events (type, plant_id, item) VALUES ('plant.changed', 7, $1) RETURNING created_at`, item); err != nil {
		t.Fatal(err)
	}
	var pos application.FeedPosition
	readUntilFrom(t, s, &pos, 1) // past the horizon, which other work may hold
	var events []struct {
		Type  string          `json:"type"`
		Time  time.Time       `json:"time"`
		Plant json.RawMessage `json:"plant"`
	}
	page := mustPage(t, s, application.FeedQuery{Limit: 10, Retention: application.DefaultEventRetention})
	if err := json.Unmarshal(page.JSON, &events); err != nil {
		t.Fatalf("%s: %v", page.JSON, err)
	}
	if len(events) != 1 || events[0].Type != "plant.changed" || string(events[0].Plant) != item || !events[0].Time.Equal(committed) {
		t.Fatalf("page %s; want the one event, committed at %s", page.JSON, committed.UTC().Format(time.RFC3339Nano))
	}
}

// A page is a range scan of the primary key that reads no row of the
// table once its rows are visible to all: the key carries each event's
// line, which is what makes a page of events cost about what a page of
// plants does.
func TestAPageIsReadFromThePrimaryKeyAlone(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	ids := make([]int64, 20)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	storeFerns(t, s, ids...)
	var pos application.FeedPosition
	readUntilFrom(t, s, &pos, 20) // past the horizon, which other work may hold
	if _, err := s.db.Exec(`VACUUM ANALYZE plant_events`); err != nil {
		t.Fatal(err)
	}
	// Small as the table is, the planner would scan it whole.
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec(`SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	var plan []string
	if err := tx.Select(&plan, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) `+readFeedPages,
		textArray([]string{"0"}, nil), bigintArray([]int64{0}), bigintArray([]int64{100})); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "Index Only Scan using plant_events_pkey on plant_events (actual rows=20 ") || !strings.Contains(text, "Heap Fetches: 0") {
		t.Fatalf("a page's plan:\n%s\nwant an index-only scan of plant_events_pkey, its 20 rows read with no heap fetch", text)
	}
}

// A line the service cannot read is an error, never a page with an event
// left out or made up.
func TestAFeedLineThatIsNotOneIsRefused(t *testing.T) {
	for _, lines := range []string{
		`12 3 plant.created 1795671479577713`,
		`12 x plant.created 1795671479577713 {"id":1}`,
		`12 3 plant.created 1795671479.5 {"id":1}`,
		`-1 3 plant.created 1795671479577713 {"id":1}`,
		`12 3 plant.created 1795671479577713 {"id":1}` + "\n" + `12 2 plant.created 1795671479577713 {"id":1}`,
		`12 3 plant.created 1795671479577713 not json`,
		`18446744073709551616 3 plant.created 1795671479577713 {"id":1}`,
		`12 9223372036854775808 plant.created 1795671479577713 {"id":1}`,
		`12  3 plant.created 1795671479577713 {"id":1}`,
		`12 3 plant.created +1795671479577713 {"id":1}`,
		`12 3 plant.created -- {"id":1}`,
		`-12 3 plant.created 1795671479577713 {"id":1}`,
	} {
		r := feedRow{Count: strings.Count(lines, "\n") + 1}
		r.Lines.String, r.Lines.Valid = lines, true
		if page, _, err := pageOfEvents(r, application.FeedPosition{}); err == nil {
			t.Errorf("lines %q gave the page %s; want an error", lines, page.JSON)
		}
	}
	line, err := parseFeedLine(`18446744073709551615 9223372036854775807 plant.deleted 0 {"id":1}`)
	if want := (feedLine{at: application.FeedPosition{Tx: 1<<64 - 1, Number: 1<<63 - 1}, typ: "plant.deleted", item: `{"id":1}`}); err != nil || line != want {
		t.Errorf("the largest numbers: %+v, %v; want %+v", line, err, want)
	}
	if line, err := parseFeedLine(`5 6 plant.created -1000001 {"id":1}`); err != nil || line.micros != -1000001 {
		t.Errorf("a time before 1970: %+v, %v", line, err)
	}
	r := feedRow{Count: 2}
	r.Lines.String, r.Lines.Valid = `12 3 plant.created 1795671479577713 {"id":1}`, true
	if _, _, err := pageOfEvents(r, application.FeedPosition{}); err == nil {
		t.Error("a page of two events with one line was read")
	}
}

// The primary key carries the line, and a key entry has a size limit
// (about a third of a page, 2,704 bytes): the largest plant the rules
// allow, its every character four bytes of UTF-8, still fits, through a
// create and a delete. The characters are drawn at random, so that the
// key's compression of long values does not shrink the line below the
// limit for it.
func TestTheLargestPlantFitsTheFeedsKey(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	wide := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(rune(0x20000 + rng.IntN(0xA6D0))) // CJK Unified Ideographs Extension B
		}
		return b.String()
	}
	name, tag := wide(200), wide(64)
	if _, _, err := s.InsertIfAbsent(ctx, record(t, -9223372036854775808, name, tag)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeletePlant(ctx, -9223372036854775808); err != nil {
		t.Fatal(err)
	}
	var longest int
	if err := s.db.Get(&longest, `SELECT max(octet_length(line)) FROM plant_events`); err != nil {
		t.Fatal(err)
	}
	if longest < (200+64)*4 {
		t.Fatalf("the longest line is %d bytes; want over %d", longest, (200+64)*4)
	}
	var pos application.FeedPosition
	readUntilFrom(t, s, &pos, 2)
}

// BenchmarkPageOfEvents renders a page of 100 events from their lines, as
// a feed page's row brings them: the service's part of a feed page besides
// the HTTP exchange and the driver.
func BenchmarkPageOfEvents(b *testing.B) {
	var lines []string
	for k := range 100 {
		n := strconv.Itoa(1_000_000 + k)
		lines = append(lines, "3253041 "+n+" plant.created 1795671591077954 "+`{"id":`+n+`,"name":"Monstera deliciosa","tag":"indoor"}`)
	}
	r := feedRow{Count: len(lines)}
	r.Lines.String, r.Lines.Valid = strings.Join(lines, "\n"), true
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := pageOfEvents(r, application.FeedPosition{}); err != nil {
			b.Fatal(err)
		}
	}
}
