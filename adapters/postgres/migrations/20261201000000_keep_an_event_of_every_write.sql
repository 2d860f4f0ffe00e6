-- The event feed (GET /events): every write of a plant by the service
-- stores one event in the statement that writes the plant (the batch
-- statements' CTEs, adapters/postgres/kinds.go), with the plant as the
-- service rendered it after the write (item; for a delete, the state it
-- had). The service renders every item; nothing here builds JSON.
--
-- Order, and why a reader never skips an event (adapters/postgres/feed.go):
-- the feed is in (xid, number) order, the writing transaction's id, then
-- the identity. A page reads only events whose xid is below the reader's
-- snapshot's xmin, below which every transaction has ended: no event can
-- ever appear behind a position a reader was handed. A writer takes
-- pg_advisory_xact_lock(plant id) for every plant of its statement before
-- it changes any row, and so gets its xid (at its first row change) only
-- once every earlier writer of those plants has committed: each plant's
-- events are in the order of its writes, and numbered so, across deletes
-- and re-creates.
--
-- plant_event_floor holds the position of the last event pruned: a
-- position before it is expired (410), since events that followed it are
-- gone. Pruning deletes the oldest events in feed order, a bounded number
-- per statement, and raises the floor in the same statement.
--
-- Backwards compatible within the release, as every migration: the
-- previous release's binary knows nothing of these tables, writes no
-- events and takes no advisory locks; its writes are missing from the feed
-- while it runs beside this one.

-- +goose Up
CREATE TABLE plant_events (
    xid        xid8        NOT NULL DEFAULT pg_current_xact_id(),
    number     bigint      GENERATED ALWAYS AS IDENTITY,
    type       text        NOT NULL CHECK (type IN ('plant.created', 'plant.changed', 'plant.deleted')),
    plant_id   bigint      NOT NULL,
    item       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (xid, number)
);

CREATE TABLE plant_event_floor (
    one    boolean PRIMARY KEY DEFAULT true CHECK (one),
    xid    xid8    NOT NULL,
    number bigint  NOT NULL
);
INSERT INTO plant_event_floor (xid, number) VALUES ('0', 0);

-- +goose Down
DROP TABLE plant_event_floor;
DROP TABLE plant_events;
