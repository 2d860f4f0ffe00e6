package postgres

import (
	"strconv"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/application"
)

// Every set of kinds composes into one statement whose parameters are the
// ids of the plants it locks, then exactly the kinds' arguments, in the
// order of their bits, each kind with its own bit (segments hold one kind
// that locks rows at most, but the composition does not rely on it).
func TestKindsComposeIntoOneStatement(t *testing.T) {
	fern := rowOf(record(t, 3, "Fern", ""), 2)
	changed := []pendingEvent{{typ: "plant.changed", item: fern.Item.String}}
	samples := []write{createWrite(record(t, 1, "Fern", "")), deleteWrite(2), {kind: &replaceKind, id: 3, arg: replacement{row: fern, events: changed}},
		{kind: &removeKind, id: 4, arg: removal{version: 1, events: changed}}}
	bits := map[uint]bool{}
	for _, w := range samples {
		if b := w.kind.bit; b == 0 || b&(b-1) != 0 || bits[b] {
			t.Fatalf("kind %s has bit %d: want a power of two of its own", w.kind.name, b)
		}
		bits[w.kind.bit] = true
	}
	for _, announce := range []announcement{silent, untraced, traced} {
		store := &Store{}
		if announce != silent {
			store.cfg.Payload = application.EventPayload
		}
		for set := 1; set < 1<<len(samples); set++ {
			var kinds []*writeKind
			var bitset uint
			args := 1 // the ids of lockPlants
			for i, w := range samples {
				if set&(1<<i) != 0 {
					kinds = append(kinds, w.kind)
					bitset |= w.kind.bit
					args += len(w.kind.args(store, []write{w}))
				}
			}
			switch announce {
			case untraced:
				args++ // the receivers of envelopes
			case traced:
				args += 2 // and the traceparents
			}
			text := batchStatement(bitset, kinds, announce)
			most := 0
			for _, p := range placeholder.FindAllString(text, -1) {
				n, _ := strconv.Atoi(p[1:])
				most = max(most, n)
			}
			if most != args || !strings.HasPrefix(text, "WITH locks AS (") || strings.Count(text, "UNION ALL") < len(kinds)-1 ||
				strings.Contains(text, "envelopes AS (") != (announce != silent) || strings.Contains(text, "AS t (plant_id, trace_parent)") != (announce == traced) {
				t.Errorf("kinds %v, announcing %v: statement with %d parameters for %d arguments:\n%s", bitset, announce, most, args, text)
			}
		}
	}
}
