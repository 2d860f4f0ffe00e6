-- The outbox of the event payload (PLANTSTORE_WEBHOOK_PAYLOAD=event): every
-- write that stores an event in plant_events announces it to each receiver
-- in the same transaction, one row per receiver here. A delivery's body is
-- the Standard Webhooks envelope of its event, which the service renders
-- from what the row keeps: the event's type and number, its commit time
-- (created_at, the event's own) and the plant's item as the service
-- rendered it. Nothing here builds JSON.
--
-- A table of its own, not columns added to webhook_events: the previous
-- release's binary claims every row of webhook_events for its receivers
-- and posts its item as a new plant, which a change or a delete is not.
-- This table it does not know, so that a binary of the previous release
-- opened on this file (after a rollback) can neither claim nor list a
-- delivery of the event payload, and never posts one as a plant; this
-- release claims from both tables, whichever payload it writes.
--
-- Down refuses while deliveries of the event payload remain, which the
-- previous release could not deliver: set the payload back to plant, let
-- them drain (plantstore webhooks list), then migrate down.

-- +goose Up
CREATE TABLE webhook_envelopes (
    id           TEXT    PRIMARY KEY,
    url          TEXT    NOT NULL,
    type         TEXT    NOT NULL CHECK (type IN ('plant.created', 'plant.changed', 'plant.deleted')),
    number       INTEGER NOT NULL,
    plant_id     INTEGER NOT NULL,
    item         TEXT    NOT NULL,
    created_at   TEXT    NOT NULL,
    retry_from   TEXT    NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      TEXT    NOT NULL,
    claim        TEXT    NULL,
    last_error   TEXT    NULL,
    failed_at    TEXT    NULL,
    trace_parent TEXT    NULL
) STRICT;

CREATE INDEX webhook_envelopes_url_due ON webhook_envelopes (url, next_at) WHERE failed_at IS NULL;

-- +goose Down
CREATE TEMP TABLE undelivered_envelopes (
    remaining INTEGER NOT NULL,
    CONSTRAINT "webhook deliveries of the event payload remain, which the previous release cannot deliver: set PLANTSTORE_WEBHOOK_PAYLOAD=plant, let them drain (plantstore webhooks list), then migrate down"
        CHECK (remaining = 0)
);
INSERT INTO undelivered_envelopes SELECT count(*) FROM webhook_envelopes;
DROP TABLE undelivered_envelopes;
DROP TABLE webhook_envelopes;
