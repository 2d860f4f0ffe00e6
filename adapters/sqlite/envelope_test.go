package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The previous release's binary claims from webhook_events with
// claimEvents, which this release kept as it was: opened on a file this
// release wrote with the event payload (after a rollback), it finds nothing
// to claim, so it never posts a change or a delete as a new plant, while
// this release claims every envelope. Migrating down refuses while
// envelopes wait, which the previous release could not deliver, and goes
// once they are delivered.
func TestThePreviousReleaseNeverDeliversAnEnvelope(t *testing.T) {
	const url = "http://receiver.example/hook"
	s := openOutbox(t, Config{Path: filepath.Join(t.TempDir(), "plants.db"), Receivers: []string{url}, Payload: application.EventPayload})
	ctx := context.Background()
	if _, _, err := s.InsertIfAbsent(ctx, recordOf(mustPlant(t, 1, "Fern", nil))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePlant(ctx, 1, func(p domain.Plant) (domain.Plant, error) {
		return mustPlant(t, 1, "Moss", nil), nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeletePlant(ctx, 1); err != nil {
		t.Fatal(err)
	}
	now, lease := time.Now().Add(time.Second), time.Minute
	var claimed []eventRow
	if err := s.write.Select(&claimed, claimEvents, stamp(now.Add(lease)), "previous-release", url, stamp(now), 16); err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 0 {
		t.Fatalf("the previous release's claim took %+v", claimed)
	}
	events, err := s.ClaimDue(ctx, url, now, lease, 16)
	if err != nil || len(events) != 3 {
		t.Fatalf("this release claimed %d, %v; want the create, the change and the delete", len(events), err)
	}

	p, err := s.migrations()
	if err != nil {
		t.Fatal(err)
	}
	// Down to the release before envelopes, through any later migration.
	const beforeEnvelopes = 20261201000000
	if _, err := p.DownTo(ctx, beforeEnvelopes); err == nil || !strings.Contains(err.Error(), "PLANTSTORE_WEBHOOK_PAYLOAD=plant") {
		t.Fatalf("migrating down with envelopes waiting: %v; want a refusal that says what to do", err)
	}
	var outcomes []application.Settlement
	for _, e := range events {
		outcomes = append(outcomes, application.Settlement{ID: e.ID, Claim: e.Claim, Delivered: true})
	}
	if err := s.Settle(ctx, outcomes); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, beforeEnvelopes); err != nil {
		t.Fatalf("migrating down once every envelope was delivered: %v", err)
	}
	var tables int
	if err := s.write.Get(&tables, `SELECT count(*) FROM sqlite_schema WHERE name = 'webhook_envelopes'`); err != nil || tables != 0 {
		t.Fatalf("webhook_envelopes is still there after going down: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
