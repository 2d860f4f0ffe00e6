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

// An event stored around the service, its line made by plant_event_line as
// the service's statements make it, is read with the time it was committed
// at; one of a type that is not an event's is refused.
func TestAnEventStoredAroundTheServiceIsRead(t *testing.T) {
	s, _ := newStore(t)
	const item = `{"id":7,"name":"Fern \"x\" y","tag":"a b"}`
	if _, err := s.db.Exec(insertEvent, "plant.renamed", item); err == nil {
		t.Fatal("an event of type plant.renamed was stored")
	}
	var committed time.Time
	if err := s.db.Get(&committed, insertEvent+` RETURNING created_at`, "plant.changed", item); err != nil {
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

// A page is a range scan of the primary key, in its order, that stops at
// the page's bound of rows: no sort, and no scan of the table.
func TestAPageIsARangeScanOfThePrimaryKey(t *testing.T) {
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
		textArray([]string{"0"}, nil), bigintArray([]int64{0}), bigintArray([]int64{5}), bigintArray([]int64{6})); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "Index Scan using plant_events_pkey on plant_events (actual rows=6 ") || strings.Contains(text, "Sort") {
		t.Fatalf("a page's plan:\n%s\nwant a scan of plant_events_pkey that reads its bound of 6 rows, and no sort", text)
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
		if page, _, err := pageOfEvents(r, application.FeedPosition{}, 100); err == nil {
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
	if _, _, err := pageOfEvents(r, application.FeedPosition{}, 100); err == nil {
		t.Error("a page of two events with one line was read")
	}
}

// The largest plant the rules allow, its every character four bytes of
// UTF-8, is stored and read back in its events' lines, through a create
// and a delete. The characters are drawn at random, so that compression
// does not shrink the line.
func TestTheLargestPlantsEventsAreRead(t *testing.T) {
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
	var pos application.FeedPosition
	events := readUntilFrom(t, s, &pos, 2)
	for _, e := range events {
		var plant struct{ Name, Tag string }
		if err := json.Unmarshal(e.Plant, &plant); err != nil || plant.Name != name || plant.Tag != tag {
			t.Fatalf("%s event of %d bytes: %v; want the plant whole", e.Type, len(e.Plant), err)
		}
	}
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
		if _, _, err := pageOfEvents(r, application.FeedPosition{}, 100); err != nil {
			b.Fatal(err)
		}
	}
}

// Migrating down past keep_each_event_once gives each event a row of its
// own, the events of one statement too, and its item column back from its
// line; up again the feed reads every event as it was, numbers going on.
func TestEventsSurviveMigratingDownAndUpAgain(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	for i, r := range s.flush(ctx, creates(record(t, 1, "Fern", ""), record(t, 2, "Fern", ""))) {
		if r.Err != nil || !r.Value.done {
			t.Fatalf("create %d: %+v, %v", i, r.Value, r.Err)
		}
	}
	if _, err := s.DeletePlant(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var pos application.FeedPosition
	before := readUntilFrom(t, s, &pos, 3)
	var stored int
	if err := s.db.Get(&stored, `SELECT count(*) FROM plant_events`); err != nil || stored != 2 {
		t.Fatalf("%d rows of events, %v; want the creates' row and the delete's", stored, err)
	}

	p, err := s.migrations()
	if err != nil {
		t.Fatal(err)
	}
	const beforeKeptOnce = 20261203000000
	if _, err := p.DownTo(ctx, beforeKeptOnce); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Type    string `db:"type"`
		PlantID int64  `db:"plant_id"`
		Item    string `db:"item"`
	}
	if err := s.db.Select(&rows, `SELECT type, plant_id, item FROM plant_events ORDER BY xid, number`); err != nil {
		t.Fatal(err)
	}
	plants := []int64{1, 2, 1} // the creates of 1 and 2, the delete of 1
	for i, e := range before {
		if i >= len(rows) || rows[i].Item != string(e.Plant) || rows[i].Type != e.Type || rows[i].PlantID != plants[i] {
			t.Fatalf("events after going down: %+v; want those of %+v", rows, before)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
	storeFerns(t, s, 3)
	pos = application.FeedPosition{}
	after := readUntilFrom(t, s, &pos, 4)
	for i, e := range before {
		if after[i].Number != e.Number || string(after[i].Plant) != string(e.Plant) || after[i].Type != e.Type {
			t.Fatalf("event %d after going down and up: %+v; want %+v", i, after[i], e)
		}
	}
	if after[3].Number <= after[2].Number {
		t.Fatalf("the next event's number %d; want above %d", after[3].Number, after[2].Number)
	}
}
