-- New events are written packed: one row per committed batch of plants and
-- receiver, holding the events as parallel arrays, instead of one row per
-- event. A create's commit then carries a row for its whole batch rather
-- than a row (and index entries) per plant, which would cost PostgreSQL
-- nearly as much as the plants themselves. The dispatcher unpacks a row into
-- webhook_events when it claims from it; only there does an event get
-- attempts, a claim and a retry time. A packed event was never attempted and
-- is due from its created_at.

-- +goose Up
CREATE TABLE webhook_event_batches (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url        text        NOT NULL,
    created_at timestamptz NOT NULL,
    event_ids  text[]      NOT NULL,
    plant_ids  bigint[]    NOT NULL,
    names      text[]      NOT NULL,
    tags       text[]      NOT NULL
);

-- +goose Down
-- A replica still running commits no batch between the copy and the drop.
LOCK TABLE webhook_event_batches IN ACCESS EXCLUSIVE MODE;
INSERT INTO webhook_events (id, url, plant_id, name, tag, created_at, retry_from, next_at)
SELECT e.id, b.url, e.plant_id, e.name, e.tag, b.created_at, b.created_at, b.created_at
FROM webhook_event_batches AS b,
     unnest(b.event_ids, b.plant_ids, b.names, b.tags) AS e (id, plant_id, name, tag);
DROP TABLE webhook_event_batches;
