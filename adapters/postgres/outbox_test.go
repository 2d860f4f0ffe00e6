package postgres

import (
	"context"
	"sync"
	"testing"
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
