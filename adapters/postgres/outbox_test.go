package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
)

// The outbox must not cost a create its own row and index entries: a batch
// of creates writes one packed row per receiver, and each event comes out of
// it with its own plant.
func TestCreatesCommittedTogetherShareAnOutboxRowPerReceiver(t *testing.T) {
	receivers := []string{"http://a.example/hook", "http://b.example/hook"}
	s, _ := newStore(t, func(c *Config) { c.Receivers = receivers })
	const n = 64
	name := func(i int) string { return fmt.Sprintf("Fern %d", i) }
	tag := func(i int) string { // every other plant has none
		if i%2 == 0 {
			return ""
		}
		return fmt.Sprintf("tag%d", i)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			if _, _, err := s.InsertIfAbsent(context.Background(), record(t, int64(i), name(i), tag(i))); err != nil {
				t.Errorf("InsertIfAbsent(%d): %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	for _, url := range receivers {
		var rows, events int
		err := s.db.QueryRow(`SELECT count(*), coalesce(sum(cardinality(event_ids)), 0) FROM webhook_event_batches WHERE url = $1`, url).Scan(&rows, &events)
		if err != nil {
			t.Fatal(err)
		}
		if events != n || rows >= n {
			t.Errorf("%s: %d events in %d rows; want %d events in fewer rows", url, events, rows, n)
		}
	}
	var claimed []application.Event
	for _, url := range receivers {
		events, err := s.ClaimDue(context.Background(), url, time.Now().Add(time.Second), time.Minute, n+1)
		if err != nil || len(events) != n {
			t.Fatalf("claimed %d events for %s, %v; want %d", len(events), url, err, n)
		}
		claimed = append(claimed, events...)
	}
	for _, e := range claimed {
		i := int(e.PlantID)
		if got, want := string(e.Item), string(plantjson.AppendItem(nil, record(t, int64(i), name(i), tag(i)).Plant)); got != want {
			t.Errorf("event %s of plant %d has item %s; want %s", e.ID, i, got, want)
		}
	}
}

// A claim unpacks only the packed rows it needs for the events it may
// claim: the rest stay packed, cheap to keep, for the next claim.
// Due events are claimed oldest first across both tables: a packed event
// committed before a retry fell due goes before that retry, and a retry due
// before the packed event's commit goes first.
func TestPackedEventsAreClaimedInTheOrderTheyFellDue(t *testing.T) {
	s, _ := newStore(t, func(c *Config) { c.Receivers = []string{"http://a.example/hook"} })
	now := time.Now()
	_, err := s.db.Exec(`INSERT INTO webhook_events (id, url, plant_id, name, created_at, retry_from, attempts, next_at)
VALUES ('msg_early', 'http://a.example/hook', 1, 'Fern', $1, $1, 3, $2),
       ('msg_late', 'http://a.example/hook', 2, 'Fern', $1, $1, 5, $3)`,
		now.Add(-time.Hour), now.Add(-20*time.Minute), now.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.db.Exec(`INSERT INTO webhook_event_batches (url, created_at, event_ids, plant_ids, names, tags)
VALUES ('http://a.example/hook', $1, '{msg_packed}', '{3}', '{Fern}', '{NULL}')`, now.Add(-10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for range 3 {
		claimed, err := s.ClaimDue(context.Background(), "http://a.example/hook", now, time.Minute, 1)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d events, %v; want 1", len(claimed), err)
		}
		order = append(order, claimed[0].ID)
	}
	if want := []string{"msg_early", "msg_packed", "msg_late"}; !slices.Equal(order, want) {
		t.Fatalf("claimed %v; want %v, in the order they fell due", order, want)
	}
}

func TestAClaimUnpacksOnlyWhatItNeeds(t *testing.T) {
	s, _ := newStore(t, func(c *Config) { c.Receivers = []string{"http://a.example/hook"} })
	_, err := s.db.Exec(`INSERT INTO webhook_event_batches (url, created_at, event_ids, plant_ids, names, tags)
SELECT 'http://a.example/hook', now(), array_agg('msg_' || n ORDER BY n), array_agg(n ORDER BY n),
       array_agg('Fern'::text), array_agg(NULL::text)
FROM generate_series(1, 15) AS n GROUP BY (n - 1) / 5 ORDER BY min(n)`)
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimDue(context.Background(), "http://a.example/hook", time.Now().Add(time.Second), time.Minute, 6)
	if err != nil || len(claimed) != 6 {
		t.Fatalf("claimed %d events, %v; want 6", len(claimed), err)
	}
	var packed, unpacked int
	if err := s.db.QueryRow(`SELECT (SELECT count(*) FROM webhook_event_batches), (SELECT count(*) FROM webhook_events)`).Scan(&packed, &unpacked); err != nil {
		t.Fatal(err)
	}
	if packed != 1 || unpacked != 10 {
		t.Fatalf("%d rows still packed and %d events unpacked; want the two rows of 5 that 6 events need unpacked, one left", packed, unpacked)
	}
	if rest, err := s.ClaimDue(context.Background(), "http://a.example/hook", time.Now().Add(time.Second), time.Minute, 20); err != nil || len(rest) != 9 {
		t.Fatalf("then claimed %d, %v; want the other 9", len(rest), err)
	}
}
