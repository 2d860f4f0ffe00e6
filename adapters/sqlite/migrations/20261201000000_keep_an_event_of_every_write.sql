-- The event feed (GET /events): every write of a plant by the service
-- stores one event in the transaction that writes the plant, with the plant
-- as the service rendered it after the write (item; for a delete, the state
-- it had). The single writer commits one transaction at a time, so the
-- numbers AUTOINCREMENT hands out inside them are the order of the commits
-- and are never reused: a reader that read up to one number has read every
-- event before it, and a plant's events are numbered in the order of its
-- writes, across deletes and re-creates. created_at is UTC in the layout of
-- the other tables, so that text order is time order.
--
-- plant_event_floor holds the number of the last event pruned: a position
-- before it is expired (410), since events that followed it are gone.
--
-- Backwards compatible within the release, as every migration: the
-- previous release's binary knows nothing of these tables and writes no
-- events; its writes are missing from the feed while it runs beside this
-- one.

-- +goose Up
CREATE TABLE plant_events (
    number     INTEGER PRIMARY KEY AUTOINCREMENT,
    type       TEXT    NOT NULL CHECK (type IN ('plant.created', 'plant.changed', 'plant.deleted')),
    plant_id   INTEGER NOT NULL,
    item       TEXT    NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;

CREATE TABLE plant_event_floor (
    one    INTEGER PRIMARY KEY CHECK (one = 1),
    number INTEGER NOT NULL
) STRICT;
INSERT INTO plant_event_floor (one, number) VALUES (1, 0);

-- +goose Down
DROP TABLE plant_event_floor;
DROP TABLE plant_events;
