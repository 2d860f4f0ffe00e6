-- Each receiver's events are claimed apart from the others', so that one
-- that hangs holds back only its own: a claim scans one receiver's due
-- events and its packed rows, oldest first. Packed rows are keyed by
-- receiver first: a key of id alone would make a claim walk past every row
-- of a receiver that fell behind to find another's. The index of due events
-- across receivers served claims of every receiver's events at once;
-- nothing else reads it. The indexes build CONCURRENTLY, so that creates and
-- deliveries go on meanwhile; only the swap of keys locks, briefly. A build
-- that fails leaves an invalid index behind, which IF NOT EXISTS would keep:
-- each index is dropped first, so that running the migration again mends it.

-- +goose NO TRANSACTION
-- +goose Up
DROP INDEX CONCURRENTLY IF EXISTS webhook_events_url_due;
CREATE INDEX CONCURRENTLY webhook_events_url_due ON webhook_events (url, next_at) WHERE failed_at IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS webhook_event_batches_url_id;
CREATE UNIQUE INDEX CONCURRENTLY webhook_event_batches_url_id ON webhook_event_batches (url, id);
ALTER TABLE webhook_event_batches
    DROP CONSTRAINT webhook_event_batches_pkey,
    ADD CONSTRAINT webhook_event_batches_pkey PRIMARY KEY USING INDEX webhook_event_batches_url_id;
DROP INDEX CONCURRENTLY IF EXISTS webhook_events_due;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS webhook_events_due;
CREATE INDEX CONCURRENTLY webhook_events_due ON webhook_events (next_at) WHERE failed_at IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS webhook_event_batches_id;
CREATE UNIQUE INDEX CONCURRENTLY webhook_event_batches_id ON webhook_event_batches (id);
ALTER TABLE webhook_event_batches
    DROP CONSTRAINT webhook_event_batches_pkey,
    ADD CONSTRAINT webhook_event_batches_pkey PRIMARY KEY USING INDEX webhook_event_batches_id;
DROP INDEX CONCURRENTLY IF EXISTS webhook_events_url_due;
