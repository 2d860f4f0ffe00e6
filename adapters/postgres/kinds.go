package postgres

import (
	"database/sql"
	"fmt"
	"time"
)

// createKind inserts plants that are absent. The plants it inserts are
// announced to every receiver in its last parameter in the same commit, by
// one packed outbox row per receiver (the aggregates of one GROUP BY read
// the rows in the same order, so the arrays stay parallel). It answers only
// for the creates it did not insert, with what is stored under each or with
// no name when nothing is visible; every create it does not answer for was
// inserted, so the common batch returns few rows. The answer SELECT reads
// the snapshot taken before the INSERT: it sees rows committed earlier and
// not the ones it inserts, so an id that is neither inserted nor seen lost a
// race to a transaction that committed meanwhile, and the batch reads it
// back. NOT IN over the inserted ids runs as one hashed lookup per row, and
// the primary key is probed only for the rows not inserted.
var createKind = writeKind{
	name: "create",
	bit:  1,
	ctes: `input AS (
    SELECT *
    FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $7::text[])
        AS t (id, name, tag, created_by, created_at, trace_parent)
), inserted AS (
    INSERT INTO plants (id, name, tag, created_by, created_at)
    SELECT id, name, tag, created_by, created_at FROM input
    ON CONFLICT (id) DO NOTHING
    RETURNING id
), announced AS (
    INSERT INTO webhook_event_batches (url, created_at, event_ids, plant_ids, names, tags, trace_parents)
    SELECT r.url, now(), array_agg('msg_' || replace(gen_random_uuid()::text, '-', '')),
           array_agg(input.id), array_agg(input.name), array_agg(input.tag),
           CASE WHEN $7::text[] IS NOT NULL THEN array_agg(input.trace_parent) END
    FROM inserted JOIN input USING (id) CROSS JOIN unnest($6::text[]) AS r (url)
    GROUP BY r.url
)`,
	answers: `SELECT input.id, plants.name, plants.tag, false AS flag
FROM input
LEFT JOIN plants ON plants.id = input.id
WHERE input.id NOT IN (SELECT id FROM inserted)`,
	args: func(s *Store, ws []write) []any {
		ids := make([]int64, len(ws))
		names, tags := make([]string, len(ws)), make([]string, len(ws))
		creators, times := make([]string, len(ws)), make([]string, len(ws))
		tagged := make([]bool, len(ws))
		for i, w := range ws {
			p := w.rec.Plant
			ids[i], names[i] = int64(p.ID()), p.Name().String()
			tags[i], tagged[i] = p.Tag().String(), p.Tag().IsSet()
			creators[i], times[i] = w.rec.CreatedBy, w.rec.CreatedAt.UTC().Format(time.RFC3339Nano)
		}
		return []any{bigintArray(ids), textArray(names, nil), textArray(tags, tagged),
			textArray(creators, nil), textArray(times, nil), s.receivers, traceParents(ws)}
	},
	assumed: func(w write) result { return result{Value: outcome{plant: w.rec.Plant, done: true}} },
	read: func(s *Store, w write, name, tag sql.NullString, _ bool) (result, bool) {
		if !name.Valid {
			return result{}, true
		}
		return s.restore(int64(w.id), name, tag), false
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
	answers: `SELECT id, NULL::text, NULL::text, true FROM deleted`,
	args: func(_ *Store, ws []write) []any {
		ids := make([]int64, len(ws))
		for i, w := range ws {
			ids[i] = int64(w.id)
		}
		return []any{bigintArray(ids)}
	},
	assumed: func(write) result { return result{} },
	locks:   true,
	read: func(_ *Store, w write, _, _ sql.NullString, flag bool) (result, bool) {
		if !flag {
			return result{Err: fmt.Errorf("store: delete of plant %d answered without removing it", w.id)}, false
		}
		return result{Value: outcome{done: true}}, false
	},
	shares: true,
}
