package postgres

import (
	"context"
	"sync"

	"github.com/jmoiron/sqlx"
)

// writeBatch stores a batch of plants and deletes another set of ids in one
// statement, hence one commit; the two sets never share an id, so that the
// order of the two does not matter (see segments). The plants it inserts are
// announced to every receiver in $7 in the same commit, by one packed outbox
// row per receiver (the aggregates of one GROUP BY read the rows in the same
// order, so the arrays stay parallel). It answers only for the creates it
// did not insert, with what is stored under each or with no name when
// nothing is visible, and for the deletes that removed a plant. Every create
// it does not answer for was inserted, every delete it does not answer for
// found nothing, so the common batch returns few rows. The outer
// SELECT reads the snapshot taken before the INSERT: it sees rows committed
// earlier and not the ones it inserts, so an id that is neither inserted nor
// seen lost a race to a transaction that committed meanwhile, and the caller
// reads it back. NOT IN over the inserted ids runs as one hashed lookup per
// row, and the primary key is probed only for the rows not inserted.
const writeBatch = `
WITH input AS (
    SELECT *
    FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
        AS t (id, name, tag, created_by, created_at)
), inserted AS (
    INSERT INTO plants (id, name, tag, created_by, created_at)
    SELECT id, name, tag, created_by, created_at FROM input
    ON CONFLICT (id) DO NOTHING
    RETURNING id
), deleted AS (
    DELETE FROM plants WHERE id = ANY($6::bigint[])
    RETURNING id
), announced AS (
    INSERT INTO webhook_event_batches (url, created_at, event_ids, plant_ids, names, tags)
    SELECT r.url, now(), array_agg('msg_' || replace(gen_random_uuid()::text, '-', '')),
           array_agg(input.id), array_agg(input.name), array_agg(input.tag)
    FROM inserted JOIN input USING (id) CROSS JOIN unnest($7::text[]) AS r (url)
    GROUP BY r.url
)
SELECT input.id, plants.name, plants.tag, false AS deleted
FROM input
LEFT JOIN plants ON plants.id = input.id
WHERE input.id NOT IN (SELECT id FROM inserted)
UNION ALL
SELECT id, NULL, NULL, true FROM deleted`

// rereadPlants reads stored plants back with a fresh snapshot.
const rereadPlants = `SELECT id, name, tag FROM plants WHERE id = ANY($1::bigint[])`

// statements holds the prepared statements, by their text. They are
// prepared on the pool, not on one connection: database/sql prepares them
// again on whichever connection runs them, so a connection that dies takes
// nothing with it. Preparing waits for first use because the table exists
// only after Migrate.
type statements struct {
	mu       sync.RWMutex
	prepared map[string]*sqlx.Stmt
}

// get returns the prepared statement of query, preparing it on first use
// (and again after a failed attempt).
func (st *statements) get(ctx context.Context, db *sqlx.DB, query string) (*sqlx.Stmt, error) {
	st.mu.RLock()
	stmt := st.prepared[query]
	st.mu.RUnlock()
	if stmt != nil {
		return stmt, nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if stmt := st.prepared[query]; stmt != nil {
		return stmt, nil
	}
	stmt, err := db.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if st.prepared == nil {
		st.prepared = make(map[string]*sqlx.Stmt)
	}
	st.prepared[query] = stmt
	return stmt, nil
}

func (st *statements) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, stmt := range st.prepared {
		_ = stmt.Close()
	}
	st.prepared = nil
}
