package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/plantstore/plantstore/adapters/internal/traceparent"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// keepsTheTraceParentOfTheCreate: every event keeps the W3C traceparent of
// the create that committed it, through whatever form the store keeps
// events in before and after their first attempt, and an untraced create's
// events have none. Creates committed together each keep their own.
func keepsTheTraceParentOfTheCreate(t *testing.T, h Harness) {
	s := openOutbox(t, h, receivers)
	tracer := sdktrace.NewTracerProvider().Tracer("storetest")
	want := map[domain.ID]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id := range int64(8) {
		wg.Go(func() {
			ctx := context.Background()
			if id%4 != 3 { // every fourth create is untraced
				c, sp := tracer.Start(ctx, "create")
				defer sp.End()
				ctx = c
			}
			p := plant(t, id, "Fern", nil)
			if _, inserted, err := s.InsertIfAbsent(ctx, record(p)); err != nil || !inserted {
				t.Errorf("InsertIfAbsent(%d): %v, inserted %v", id, err, inserted)
			}
			mu.Lock()
			want[p.ID()] = traceparent.From(ctx)
			mu.Unlock()
		})
	}
	wg.Wait()
	now := time.Now().Add(time.Minute)
	for _, url := range receivers {
		claimed := claimTraceParents(t, s, url, now, want)
		// Retried, the events keep it.
		var retries []application.Settlement
		for _, e := range claimed {
			retries = append(retries, application.Settlement{ID: e.ID, Claim: e.Claim, RetryAt: now, Error: "retry"})
		}
		if err := s.Settle(context.Background(), retries); err != nil {
			t.Fatalf("Settle: %v", err)
		}
		claimTraceParents(t, s, url, now.Add(time.Second), want)
	}
}

// claimTraceParents claims every due event of url and checks that each
// has its create's traceparent.
func claimTraceParents(t *testing.T, s OutboxStore, url string, now time.Time, want map[domain.ID]string) []application.Event {
	t.Helper()
	events, err := s.ClaimDue(context.Background(), url, now, time.Minute, 100)
	if err != nil {
		t.Fatalf("ClaimDue: %v", err)
	}
	if len(events) != len(want) {
		t.Fatalf("claimed %d events of %s; want %d", len(events), url, len(want))
	}
	for _, e := range events {
		if tp := want[e.PlantID]; e.TraceParent != tp {
			t.Errorf("event of plant %d to %s has traceparent %q; want %q", e.PlantID, url, e.TraceParent, tp)
		}
	}
	return events
}
