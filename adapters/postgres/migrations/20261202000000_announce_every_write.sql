-- The outbox of the event payload (PLANTSTORE_WEBHOOK_PAYLOAD=event): every
-- write that stores an event in plant_events announces it to each receiver,
-- in the same statement, by one packed row per receiver and statement in
-- webhook_envelope_batches, as creates announce new plants in
-- webhook_event_batches (adapters/postgres/kinds.go). A delivery's body is
-- the Standard Webhooks envelope of its event, which the service renders
-- from what the row keeps: the event's type and number, its commit time
-- (created_at, the transaction's time, as plant_events' created_at) and the
-- plant's item as the service rendered it. Nothing here builds JSON. The
-- dispatcher unpacks a row into webhook_envelopes when it claims from it,
-- as it unpacks webhook_event_batches into webhook_events; only there does
-- a delivery get attempts, a claim and a retry time.
--
-- Tables of their own, not columns added to webhook_events and
-- webhook_event_batches: the previous release's binary claims every row of
-- those two for its receivers and posts its item as a new plant, which a
-- change or a delete is not. These tables it does not know, so it can
-- neither claim nor list a delivery of the event payload, and never posts
-- one as a plant; this release claims from both pairs of tables, whichever
-- payload it writes, so that a change of the setting, or replicas of the
-- previous release beside this one, leave nothing behind. The previous
-- release writes plant payloads only, whatever this setting says.
--
-- Down refuses while deliveries of the event payload remain, which the
-- previous release could not deliver: set the payload back to plant, let
-- them drain (plantstore webhooks list), then migrate down.

-- +goose Up
CREATE TABLE webhook_envelope_batches (
    id            bigint      GENERATED ALWAYS AS IDENTITY,
    url           text        NOT NULL,
    created_at    timestamptz NOT NULL,
    types         text[]      NOT NULL,
    numbers       bigint[]    NOT NULL,
    plant_ids     bigint[]    NOT NULL,
    items         text[]      NOT NULL,
    trace_parents text[],
    PRIMARY KEY (url, id)
);

CREATE TABLE webhook_envelopes (
    id           text        NOT NULL PRIMARY KEY,
    url          text        NOT NULL,
    type         text        NOT NULL CHECK (type IN ('plant.created', 'plant.changed', 'plant.deleted')),
    number       bigint      NOT NULL,
    plant_id     bigint      NOT NULL,
    item         text        NOT NULL,
    created_at   timestamptz NOT NULL,
    retry_from   timestamptz NOT NULL,
    attempts     integer     NOT NULL DEFAULT 0,
    next_at      timestamptz NOT NULL,
    claim        text        NULL,
    last_error   text        NULL,
    failed_at    timestamptz NULL,
    trace_parent text        NULL
);

-- Claims scan one receiver's due deliveries, oldest first.
CREATE INDEX webhook_envelopes_url_due ON webhook_envelopes (url, next_at) WHERE failed_at IS NULL;

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    -- A replica still running commits no envelope between the check and the drop.
    LOCK TABLE webhook_envelope_batches, webhook_envelopes IN ACCESS EXCLUSIVE MODE;
    IF EXISTS (SELECT FROM webhook_envelope_batches) OR EXISTS (SELECT FROM webhook_envelopes) THEN
        RAISE EXCEPTION 'webhook deliveries of the event payload remain, which the previous release cannot deliver: set PLANTSTORE_WEBHOOK_PAYLOAD=plant, let them drain (plantstore webhooks list), then migrate down';
    END IF;
END
$$;
-- +goose StatementEnd
DROP TABLE webhook_envelopes;
DROP TABLE webhook_envelope_batches;
