-- +goose Up
-- The outbox of new-plant events: one row per stored plant and receiver,
-- written in the transaction of the plant, removed once the receiver
-- answered 2xx. next_at is when the event is due; while an attempt runs it
-- is when that attempt's claim ends. Times are UTC in the fixed-width form
-- of plants.created_at, so that text order is time order.
CREATE TABLE webhook_events (
    id         TEXT    PRIMARY KEY,
    url        TEXT    NOT NULL,
    plant_id   INTEGER NOT NULL,
    name       TEXT    NOT NULL,
    tag        TEXT    NULL,
    created_at TEXT    NOT NULL,
    retry_from TEXT    NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    next_at    TEXT    NOT NULL,
    claim      TEXT    NULL,
    last_error TEXT    NULL,
    failed_at  TEXT    NULL
) STRICT;

CREATE INDEX webhook_events_due ON webhook_events (next_at) WHERE failed_at IS NULL;

-- +goose Down
DROP TABLE webhook_events;
