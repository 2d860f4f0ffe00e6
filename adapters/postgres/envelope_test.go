package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// The previous release's binary claims from webhook_events and
// webhook_event_batches with the statements of plantTables, which this
// release kept as they were: run beside this one with the event payload,
// it finds nothing to claim, so it never posts a change or a delete as a
// new plant, while this release claims every envelope. Migrating down
// refuses while envelopes wait, which the previous release could not
// deliver, and goes once they are delivered.
func TestThePreviousReleaseNeverDeliversAnEnvelope(t *testing.T) {
	const url = "http://receiver.example/hook"
	s, _ := newStore(t, func(c *Config) { c.Receivers, c.Payload = []string{url}, application.EventPayload })
	ctx := context.Background()
	if _, _, err := s.InsertIfAbsent(ctx, record(t, 1, "Fern", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePlant(ctx, 1, func(p domain.Plant) (domain.Plant, error) { return p.WithName(mustName(t, "Moss")), nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeletePlant(ctx, 1); err != nil {
		t.Fatal(err)
	}
	now, lease := time.Now().Add(time.Second), time.Minute
	for _, query := range []string{plantTables.claimStatement(16), plantTables.unpackStatement(16)} {
		var claimed []eventRow
		if err := s.db.Select(&claimed, query, now.UTC(), now.Add(lease).UTC(), "previous-release", url); err != nil {
			t.Fatal(err)
		}
		if len(claimed) != 0 {
			t.Fatalf("the previous release's claim took %+v", claimed)
		}
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
	const beforeEnvelopes = 20261201010000
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
	var gone bool
	if err := s.db.Get(&gone, `SELECT to_regclass('webhook_envelopes') IS NULL AND to_regclass('webhook_envelope_batches') IS NULL`); err != nil || !gone {
		t.Fatalf("the envelopes' tables are still there after going down: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
