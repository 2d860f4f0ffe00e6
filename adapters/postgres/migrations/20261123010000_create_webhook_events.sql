-- The outbox of new-plant events: one row per stored plant and receiver,
-- written in the same statement as the plant, removed once the receiver
-- answered 2xx. next_at is when the event is due; while an attempt runs it
-- is when that attempt's claim ends, so that a replica that dies holding a
-- claim gives the event back. Failed events (past their maximum age) are
-- kept for the operator.

-- +goose Up
CREATE TABLE webhook_events (
    id         text        NOT NULL PRIMARY KEY,
    url        text        NOT NULL,
    plant_id   bigint      NOT NULL,
    name       text        NOT NULL,
    tag        text        NULL,
    created_at timestamptz NOT NULL,
    retry_from timestamptz NOT NULL,
    attempts   integer     NOT NULL DEFAULT 0,
    next_at    timestamptz NOT NULL,
    claim      text        NULL,
    last_error text        NULL,
    failed_at  timestamptz NULL
);

-- Claims scan the due events, oldest first.
CREATE INDEX webhook_events_due ON webhook_events (next_at) WHERE failed_at IS NULL;

-- +goose Down
DROP TABLE webhook_events;
