package postgres

import (
	"fmt"
	"strconv"
	"strings"
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

// createKind inserts plants that are absent. The plants it inserts are
// announced to every receiver in its parameter after the rows in the same
// commit, by one packed outbox row per receiver (the aggregates of one
// GROUP BY read the rows in the same order, so the arrays stay parallel),
// whose events keep each plant's item. It answers only for the creates it
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
    INSERT INTO plants (` + columnList("") + `)
    SELECT ` + columnList("") + ` FROM input
    ON CONFLICT (id) DO NOTHING
    RETURNING id
), announced AS (
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
			rows[i] = rowOf(w.rec, 1)
		}
		return append(rowArrays(rows), s.receivers, traceParents(ws))
	},
	assumed: func(w write) result { return result{Value: outcome{plant: w.rec.Plant, done: true}} },
	read: func(s *Store, w write, row answerRow) (result, bool) {
		if !row.present() {
			return result{}, true
		}
		return s.restore(row.plantRow), false
	},
	shares: true,
}

// deleteKind removes plants. It answers only for the deletes that removed
// a plant; every other one found nothing.
var deleteKind = writeKind{
	name: "delete",
	bit:  2,
	ctes: `deleted AS (
    DELETE FROM plants WHERE id = ANY($1::bigint[])
    RETURNING id
)`,
	answers: `SELECT id, ` + nullColumns("id") + `, true AS flag FROM deleted`,
	args: func(_ *Store, ws []write) []any {
		ids := make([]int64, len(ws))
		for i, w := range ws {
			ids[i] = int64(w.id)
		}
		return []any{bigintArray(ids)}
	},
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
// version it was decided on: the row carries the next version, and the
// UPDATE takes only a stored row one version before it. Under READ
// COMMITTED the UPDATE checks that on the latest committed row, after
// waiting for any writer of it, so the check and the write are one step.
// It answers the rows it wrote; another is not written, since a writer
// came first (done clear), and the update is decided again on what that
// writer left.
var replaceKind = writeKind{
	name: "replace",
	bit:  4,
	ctes: `replacements AS (
    SELECT * FROM unnest(` + rowParams(1) + `) AS t (` + columnList("") + `)
), replaced AS (
    UPDATE plants SET (` + columnList("", "id") + `) = (` + columnList("replacements.", "id") + `)
    FROM replacements
    WHERE plants.id = replacements.id AND plants.version = replacements.version - 1
    RETURNING plants.id
)`,
	answers: `SELECT id, ` + nullColumns("id") + `, true AS flag FROM replaced`,
	args: func(_ *Store, ws []write) []any {
		rows := make([]plantRow, len(ws))
		for i, w := range ws {
			rows[i] = w.arg.(plantRow)
		}
		return rowArrays(rows)
	},
	assumed: func(write) result { return result{} },
	locks:   true,
	read: func(_ *Store, w write, row answerRow) (result, bool) {
		return result{Value: outcome{done: row.Flag}}, false
	},
}

// removeKind deletes the rows that updates decided to delete (see
// update.go), each only at the version it was decided on, as replaceKind
// writes them.
var removeKind = writeKind{
	name: "remove",
	bit:  8,
	ctes: `removals AS (
    SELECT * FROM unnest($1::bigint[], $2::bigint[]) AS t (id, version)
), removed AS (
    DELETE FROM plants USING removals
    WHERE plants.id = removals.id AND plants.version = removals.version
    RETURNING plants.id
)`,
	answers: `SELECT id, ` + nullColumns("id") + `, true AS flag FROM removed`,
	args: func(_ *Store, ws []write) []any {
		ids, versions := make([]int64, len(ws)), make([]int64, len(ws))
		for i, w := range ws {
			ids[i], versions[i] = int64(w.id), w.arg.(int64)
		}
		return []any{bigintArray(ids), bigintArray(versions)}
	},
	assumed: func(write) result { return result{} },
	locks:   true,
	read: func(_ *Store, w write, row answerRow) (result, bool) {
		return result{Value: outcome{done: row.Flag}}, false
	},
}
