package postgres

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The outbox must not cost a create its own row and index entries: a batch
// of creates writes one packed row per receiver.
func TestCreatesCommittedTogetherShareAnOutboxRowPerReceiver(t *testing.T) {
	receivers := []string{"http://a.example/hook", "http://b.example/hook"}
	s, _ := newStore(t, func(c *Config) { c.Receivers = receivers })
	const n = 64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			if _, _, err := s.InsertIfAbsent(context.Background(), record(t, int64(i), "Fern", "")); err != nil {
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
}

// A claim unpacks only the packed rows it needs for the events it may
// claim: the rest stay packed, cheap to keep, for the next claim.
func TestAClaimUnpacksOnlyWhatItNeeds(t *testing.T) {
	s, _ := newStore(t, func(c *Config) { c.Receivers = []string{"http://a.example/hook"} })
	_, err := s.db.Exec(`INSERT INTO webhook_event_batches (url, created_at, event_ids, plant_ids, names, tags)
SELECT 'http://a.example/hook', now(), array_agg('msg_' || n ORDER BY n), array_agg(n ORDER BY n),
       array_agg('Fern'::text), array_agg(NULL::text)
FROM generate_series(1, 15) AS n GROUP BY (n - 1) / 5 ORDER BY min(n)`)
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimDue(context.Background(), time.Now().Add(time.Second), time.Minute, 6)
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
	if rest, err := s.ClaimDue(context.Background(), time.Now().Add(time.Second), time.Minute, 20); err != nil || len(rest) != 9 {
		t.Fatalf("then claimed %d, %v; want the other 9", len(rest), err)
	}
}
