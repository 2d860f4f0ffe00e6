package postgres

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/plantstore/plantstore/application"
)

// rowParams are the parameters of the arrays rowArrays makes, numbered
// from first, each cast to its column's array type.
func rowParams(first int) string {
	params := make([]string, len(rowColumns))
	for i, c := range rowColumns {
		params[i] = "$" + strconv.Itoa(first+i) + "::" + c.pgType + "[]"
	}
	return strings.Join(params, ", ")
}

// afterRow numbers the parameters that follow a row's arrays from first.
func afterRow(first, k int) string { return "$" + strconv.Itoa(first+len(rowColumns)+k) }

// createKind inserts plants that are absent, with the event of each. With
// the plant payload, the plants it inserts are announced to every receiver
// in its parameter after the rows (none with the event payload, whose
// statement announces events: see envelopes) in the same commit, by one
// packed outbox row per receiver (the aggregates of one GROUP BY read the
// rows in the same order, so the arrays stay parallel), whose events keep
// each plant's item. It answers only for the creates it
// did not insert, with the row stored under each or with NULLs when nothing
// is visible; every create it does not answer for was inserted, so the
// common batch returns few rows. The answer SELECT reads the snapshot taken
// before the INSERT: it sees rows committed earlier and not the ones it
// inserts, so an id that is neither inserted nor seen lost a race to a
// transaction that committed meanwhile, and the batch reads it back. NOT IN
// over the inserted ids runs as one hashed lookup per row, and the primary
// key is probed only for the rows not inserted.
var createKind = writeKind{
	name: "create",
	bit:  1,
	ctes: `input AS (
    SELECT *
    FROM unnest(` + rowParams(1) + `, ` + afterRow(1, 1) + `::text[])
        AS t (` + columnList("") + `, trace_parent)
), inserted AS (
    INSERT INTO plants (` + columnList("", versionColumn) + `)
    SELECT ` + columnList("", versionColumn) + ` FROM input
    WHERE (SELECT n FROM locks) IS NOT NULL
    ON CONFLICT (id) DO NOTHING
    RETURNING id, item
), ` + storedEvents("created_events", `SELECT 'plant.created' AS type, id AS plant_id, item FROM inserted`) + `, announced AS (
    INSERT INTO webhook_event_batches (url, created_at, event_ids, plant_ids, items, trace_parents)
    SELECT r.url, now(), array_agg('msg_' || replace(gen_random_uuid()::text, '-', '')),
           array_agg(input.id), array_agg(input.item),
           CASE WHEN ` + afterRow(1, 1) + `::text[] IS NOT NULL THEN array_agg(input.trace_parent) END
    FROM inserted JOIN input USING (id) CROSS JOIN unnest(` + afterRow(1, 0) + `::text[]) AS r (url)
    GROUP BY r.url
)`,
	answers: `SELECT input.id, ` + columnList("plants.", "id") + `, false AS flag
FROM input
LEFT JOIN plants ON plants.id = input.id
WHERE input.id NOT IN (SELECT id FROM inserted)`,
	args: func(s *Store, ws []write) []any {
		rows := make([]plantRow, len(ws))
		for i, w := range ws {
			rows[i] = rowOf(w.rec, 0) // the database versions it
		}
		if s.cfg.Payload == application.EventPayload {
			return append(rowArrays(rows), "{}", nil)
		}
		return append(rowArrays(rows), s.receivers, traceParents(ws))
	},
	events:  "created_events",
	assumed: func(w write) result { return result{Value: outcome{plant: w.rec.Plant, done: true}} },
	read: func(s *Store, w write, row answerRow) (result, bool) {
		if !row.present() {
			return result{}, true
		}
		return s.restore(row.plantRow), false
	},
	shares: true,
}

// deleteKind removes plants, with the event of each, which keeps the item
// the plant had. It removes only plants that keep their item (those the
// service wrote), and answers only for the deletes that removed one: every
// other one is decided again as a conditional delete that allows any plant
// (see applySegment), which reads the plant and so finds it absent, or
// renders the item of one stored without it in Go.
var deleteKind = writeKind{
	name: "delete",
	bit:  2,
	ctes: `deleted AS (
    DELETE FROM plants WHERE id = ANY($1::bigint[]) AND item IS NOT NULL AND (SELECT n FROM locks) IS NOT NULL
    RETURNING id, item
), ` + storedEvents("deleted_events", `SELECT 'plant.deleted' AS type, id AS plant_id, item FROM deleted`),
	answers: `SELECT id, ` + nullColumns("id") + `, true AS flag FROM deleted`,
	args: func(_ *Store, ws []write) []any {
		ids := make([]int64, len(ws))
		for i, w := range ws {
			ids[i] = int64(w.id)
		}
		return []any{bigintArray(ids)}
	},
	events:  "deleted_events",
	assumed: func(write) result { return result{} },
	locks:   true,
	read: func(_ *Store, w write, row answerRow) (result, bool) {
		if !row.Flag {
			return result{Err: fmt.Errorf("store: delete of plant %d answered without removing it", w.id)}, false
		}
		return result{Value: outcome{done: true}}, false
	},
	shares: true,
}

// replaceKind writes the row an update decided (see update.go) over the
// version it was decided on: the row carries that version, and the UPDATE
// takes only a stored row still at it (the database gives the row a new
// one, which no other state of the id ever had or will have). Under READ
// COMMITTED the UPDATE checks that on the latest committed row, after
// waiting for any writer of it, so the check and the write are one step.
// It answers the rows it wrote; another is not written, since a writer
// came first (done clear), and the update is decided again on what that
// writer left. The events of a row it wrote (one per update that changed
// the plant) are written with it, in the order of the updates.
var replaceKind = writeKind{
	name: "replace",
	bit:  4,
	ctes: `replacements AS (
    SELECT * FROM unnest(` + rowParams(1) + `) AS t (` + columnList("") + `)
), replaced AS (
    UPDATE plants SET (` + columnList("", replaceKeeps...) + `) = (` + columnList("replacements.", replaceKeeps...) + `)
    FROM replacements
    WHERE plants.id = replacements.id AND plants.version = replacements.version
      AND (SELECT n FROM locks) IS NOT NULL
    RETURNING plants.id
), ` + storedEvents("changed_events", `SELECT e.type, e.id AS plant_id, e.item
        FROM unnest(`+afterRow(1, 0)+`::text[], `+afterRow(1, 1)+`::bigint[], `+afterRow(1, 2)+`::text[]) WITH ORDINALITY AS e (type, id, item, n)
        WHERE e.id IN (SELECT id FROM replaced)
        ORDER BY e.n`),
	answers: `SELECT id, ` + nullColumns("id") + `, true AS flag FROM replaced`,
	args: func(_ *Store, ws []write) []any {
		rows := make([]plantRow, len(ws))
		var events pendingEvents
		for i, w := range ws {
			r := w.arg.(replacement)
			rows[i] = r.row
			events.add(w.id, r.events)
		}
		return append(rowArrays(rows), events.args()...)
	},
	events:  "changed_events",
	assumed: func(write) result { return result{} },
	locks:   true,
	read: func(_ *Store, w write, row answerRow) (result, bool) {
		return result{Value: outcome{done: row.Flag}}, false
	},
}

// replaceKeeps are the columns a replacement leaves as they are: the key,
// the version the database sets, and the create's record.
var replaceKeeps = []string{"id", versionColumn, "created_by", "created_at"}

// removeKind deletes the rows that updates decided to delete (see
// update.go), each only at the version it was decided on, as replaceKind
// writes them, with their events: those of the changes decided before the
// delete, then the delete's.
var removeKind = writeKind{
	name: "remove",
	bit:  8,
	ctes: `removals AS (
    SELECT * FROM unnest($1::bigint[], $2::bigint[]) AS t (id, version)
), removed AS (
    DELETE FROM plants USING removals
    WHERE plants.id = removals.id AND plants.version = removals.version
      AND (SELECT n FROM locks) IS NOT NULL
    RETURNING plants.id
), ` + storedEvents("removal_events", `SELECT e.type, e.id AS plant_id, e.item
        FROM unnest($3::text[], $4::bigint[], $5::text[]) WITH ORDINALITY AS e (type, id, item, n)
        WHERE e.id IN (SELECT id FROM removed)
        ORDER BY e.n`),
	answers: `SELECT id, ` + nullColumns("id") + `, true AS flag FROM removed`,
	args: func(_ *Store, ws []write) []any {
		ids, versions := make([]int64, len(ws)), make([]int64, len(ws))
		var events pendingEvents
		for i, w := range ws {
			r := w.arg.(removal)
			ids[i], versions[i] = int64(w.id), r.version
			events.add(w.id, r.events)
		}
		return append([]any{bigintArray(ids), bigintArray(versions)}, events.args()...)
	},
	events:  "removal_events",
	assumed: func(write) result { return result{} },
	locks:   true,
	read: func(_ *Store, w write, row answerRow) (result, bool) {
		return result{Value: outcome{done: row.Flag}}, false
	},
}
