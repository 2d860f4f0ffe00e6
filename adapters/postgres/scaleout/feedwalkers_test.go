package scaleout

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/postgres"
	"github.com/plantstore/plantstore/application"
)

// feedWalker walks the event feed to its end again and again, as a reader
// at the head does, across whatever the cluster goes through: a page the
// store cannot answer is asked again from the same position.
type feedWalker struct {
	mu     sync.Mutex
	events []string // the ids of the events read, in order
	faults []error  // errors other than ErrUnavailable
}

// walkerPage is the number of events a walker asks for at a time: small,
// so that pages follow one another at the head.
const walkerPage = 20

// walk reads s's feed from its start until ctx ends, then to its end.
func (w *feedWalker) walk(ctx context.Context, s *postgres.Store) {
	var after application.FeedPosition
	hasAfter := false
	for ctx.Err() == nil {
		if next, _, ok := w.page(s, after, hasAfter); ok {
			after, hasAfter = next, true
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
		next, n, ok := w.page(s, after, hasAfter)
		if ok && n < walkerPage {
			return
		}
		if ok {
			after, hasAfter = next, true
		}
	}
	w.fault(errors.New("the walker never reached the feed's end after the load"))
}

// page reads one page after after and keeps its events: it returns where
// to go on, how many events it read, and whether it read a page.
func (w *feedWalker) page(s *postgres.Store, after application.FeedPosition, hasAfter bool) (application.FeedPosition, int, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), failoverDeadline)
	defer cancel()
	page, err := s.ReadEvents(ctx, application.FeedQuery{After: after, HasAfter: hasAfter, Limit: walkerPage, Retention: application.EventRetention(time.Hour)})
	if err != nil {
		if !errors.Is(err, application.ErrUnavailable) {
			w.fault(err)
		}
		return after, 0, false
	}
	ids, err := eventIDs(page.JSON)
	if err != nil {
		w.fault(err)
		return after, 0, false
	}
	w.mu.Lock()
	w.events = append(w.events, ids...)
	w.mu.Unlock()
	return page.Next, page.Count, true
}

func (w *feedWalker) fault(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.faults = append(w.faults, err)
}

// eventIDs are the ids of the events of a page.
func eventIDs(page []byte) ([]string, error) {
	var events []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(page, &events); err != nil {
		return nil, err
	}
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	return ids, nil
}

// checkWalkers compares what each walker read, across the failover, with
// the feed of the primary after it, read from its start in one go: the
// same events in the same order, none skipped (committed behind a position
// handed out), none twice, and none the failover lost.
func checkWalkers(t *testing.T, s *postgres.Store, walkers []*feedWalker) {
	t.Helper()
	var truth []string
	after, hasAfter := application.FeedPosition{}, false
	for {
		page, err := s.ReadEvents(context.Background(), application.FeedQuery{After: after, HasAfter: hasAfter, Limit: 1000, Retention: application.EventRetention(time.Hour)})
		require.NoError(t, err)
		ids, err := eventIDs(page.JSON)
		require.NoError(t, err)
		truth = append(truth, ids...)
		if page.Count < 1000 {
			break
		}
		after, hasAfter = page.Next, true
	}
	for i, w := range walkers {
		w.mu.Lock()
		for _, err := range w.faults {
			t.Errorf("walker %d: %v", i, err)
		}
		if !slices.Equal(w.events, truth) {
			t.Errorf("walker %d read %d events, the new primary's feed holds %d: %s", i, len(w.events), len(truth), firstDifference(w.events, truth))
		}
		w.mu.Unlock()
	}
	t.Logf("%d walkers each read the %d events of the feed, in its order", len(walkers), len(truth))
}

// firstDifference describes where read and truth part.
func firstDifference(read, truth []string) string {
	for i := range min(len(read), len(truth)) {
		if read[i] != truth[i] {
			return "at " + strconv.Itoa(i) + " the walker read " + read[i] + " where the feed has " + truth[i]
		}
	}
	return "one is the start of the other"
}
