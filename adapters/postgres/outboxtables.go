package postgres

import (
	"fmt"
	"strings"
	"sync"

	"github.com/plantstore/plantstore/application"
)

// outboxTables is one pair of the outbox's tables, those of one payload:
// the deliveries as the writes committed them, packed, one row per receiver
// and statement, and those unpacked by a claim, each with its attempts,
// claim and retry time. The dispatcher claims from both pairs, whichever
// payload the store writes, so that deliveries of the other one, left by a
// change of the setting or written by other replicas, are delivered too.
type outboxTables struct {
	payload application.Payload
	// claimTag starts the pair's claims: a settlement goes to the table of
	// its claim.
	claimTag string
	// words are what the braced words of the statements stand for.
	words *strings.Replacer
	// claims are the pair's claimEvents and unpackEvents, by limit;
	// settle is its settleEvents.
	claims, unpacks sync.Map // int to string
	settle          string
}

// The pairs: webhook_events and webhook_event_batches hold the plant
// payload's deliveries (the body the plant), webhook_envelopes and
// webhook_envelope_batches the event payload's (the body the event's
// envelope), which keep the event's type and number as well. The previous
// release's binary knows only the first pair, and so never delivers an
// envelope's event as a plant.
var (
	plantTables = newOutboxTables(application.PlantPayload, "", strings.NewReplacer(
		"{events}", "webhook_events", "{batches}", "webhook_event_batches",
		"{counted}", "event_ids", "{p.ids}", "p.event_ids, ", "{b.ids}", "b.event_ids, ", "{ids}", "id, ",
		"{p.e.id}", "e.id", "{b.e.id}", "e.id",
		"{more}", "", "{e.more}", "", "{p.arrays}", "", "{b.arrays}", "",
		"{as.more}", ", NULL::text AS type, NULL::bigint AS number", "{e.as.more}", ", NULL, NULL"))
	envelopeTables = newOutboxTables(application.EventPayload, "env.", strings.NewReplacer(
		"{events}", "webhook_envelopes", "{batches}", "webhook_envelope_batches",
		"{counted}", "plant_ids", "{p.ids}", "", "{b.ids}", "", "{ids}", "",
		"{p.e.id}", envelopeID("p"), "{b.e.id}", envelopeID("b"),
		"{more}", ", type, number", "{e.more}", ", e.type, e.number",
		"{p.arrays}", ", p.types, p.numbers", "{b.arrays}", ", b.types, b.numbers",
		"{as.more}", ", type, number", "{e.as.more}", ", e.type, e.number"))
	outboxPairs = []*outboxTables{plantTables, envelopeTables}
)

// envelopeID is the webhook-id of the envelope at ordinality e.n of the
// packed row aliased row: unique per event and receiver (a packed row is
// one receiver's, and its identity is never reused) and the same on every
// attempt, made when the row is unpacked or listed, so that a statement
// that writes the row draws no random id per event, as a packed row of the
// plant payload does.
func envelopeID(row string) string { return "'msg_' || " + row + ".id || '_' || e.n AS id" }

func newOutboxTables(p application.Payload, claimTag string, words *strings.Replacer) *outboxTables {
	t := &outboxTables{payload: p, claimTag: claimTag, words: words}
	t.settle = words.Replace(settleEvents)
	return t
}

// claimStatement is the pair's claimEvents for limit.
func (t *outboxTables) claimStatement(limit int) string {
	return t.statement(&t.claims, claimEvents, limit)
}

// unpackStatement is the pair's unpackEvents for limit.
func (t *outboxTables) unpackStatement(limit int) string {
	return t.statement(&t.unpacks, unpackEvents, limit)
}

func (t *outboxTables) statement(cache *sync.Map, template string, limit int) string {
	if text, ok := cache.Load(limit); ok {
		return text.(string)
	}
	text := fmt.Sprintf(t.words.Replace(template), limit)
	cache.Store(limit, text)
	return text
}

// pairOfClaim is the pair whose claims start as claim does.
func pairOfClaim(claim string) *outboxTables {
	if strings.HasPrefix(claim, envelopeTables.claimTag) {
		return envelopeTables
	}
	return plantTables
}
