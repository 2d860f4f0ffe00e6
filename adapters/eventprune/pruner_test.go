package eventprune

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// create stores n plants from id, each an event.
func create(t *testing.T, s *memory.Store, from, n int64) {
	t.Helper()
	for id := from; id < from+n; id++ {
		np, err := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: "Fern"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.InsertIfAbsent(context.Background(), application.Record{Plant: domain.PlantFrom(np), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
}

// kept counts the events the feed still holds.
func kept(t *testing.T, s *memory.Store) int {
	t.Helper()
	page, err := s.ReadEvents(context.Background(), application.FeedQuery{Limit: application.MaxEventLimit})
	if err != nil {
		t.Fatal(err)
	}
	return page.Count
}

// Events are removed once older than the retention, by the pass that
// follows, and no sooner.
func TestPrunesEventsOnceOlderThanTheRetention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memory.New()
		p := New(Config{Retention: application.EventRetention(time.Hour), Every: time.Minute}, s, slog.New(slog.NewTextHandler(io.Discard, nil)))
		create(t, s, 1, 5)
		p.Start()
		defer p.Stop(context.Background())
		time.Sleep(30 * time.Minute)
		create(t, s, 100, 3)
		time.Sleep(29*time.Minute + 30*time.Second)
		synctest.Wait()
		if n := kept(t, s); n != 8 {
			t.Fatalf("%d events kept before any is an hour old, want 8", n)
		}
		time.Sleep(2 * time.Minute) // the first five are more than an hour old
		synctest.Wait()
		if n := kept(t, s); n != 3 {
			t.Fatalf("%d events kept once five are older than the retention, want 3", n)
		}
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		if n := kept(t, s); n != 0 {
			t.Fatalf("%d events kept once all are older than the retention, want 0", n)
		}
	})
}

// A pass removes at most Batch events per call and MaxBatches calls; the
// backlog goes in the passes that follow.
func TestAPassIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memory.New()
		create(t, s, 1, 25)
		time.Sleep(2 * time.Hour)
		p := New(Config{Retention: application.EventRetention(time.Hour), Batch: 4, MaxBatches: 3}, s, slog.New(slog.NewTextHandler(io.Discard, nil)))
		for _, want := range []int{12, 12, 1, 0} {
			if got := p.Pass(context.Background()); got != want {
				t.Fatalf("a pass removed %d events, want %d", got, want)
			}
		}
	})
}

// Stop ends the loop; a store that fails is logged and tried again at the
// next pass.
func TestStopsAndOutlivesAFailingStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memory.New()
		create(t, s, 1, 2)
		time.Sleep(2 * time.Hour)
		s.Inject(func() error { return application.ErrUnavailable })
		p := New(Config{Retention: application.EventRetention(time.Hour)}, s, slog.New(slog.NewTextHandler(io.Discard, nil)))
		p.Start()
		time.Sleep(90 * time.Second)
		s.Inject(nil)
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := kept(t, s); n != 0 {
			t.Fatalf("%d events kept after the store came back, want 0", n)
		}
		p.Stop(context.Background())
	})
}
