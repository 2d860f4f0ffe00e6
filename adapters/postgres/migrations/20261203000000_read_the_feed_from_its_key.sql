-- A page of the event feed is read from the primary key alone. Each event
-- keeps its feed line, generated from its other columns when it is stored:
-- its transaction id, number, type, commit time (Unix microseconds) and
-- item, space-separated, the item last (adapters/postgres/feedpage.go reads
-- it). The primary key carries the line (INCLUDE), so that a page is a
-- range scan of the key that visits the table only for rows the visibility
-- map does not yet show as visible to all, and aggregates one stored text
-- per event, as a page of plants aggregates items: reading five columns
-- and turning four of them into text for every event cost PostgreSQL
-- twice what a list page does (docs/performance.md, "The event feed").
-- The line holds no JSON: the service renders each event around its item.
--
-- Autovacuum visits the table after every 10,000 new events rather than
-- after a fifth of the table, so that recent events, the ones readers
-- polling the end of the feed read, are soon visible to all and read from
-- the key alone too.
--
-- A key entry holds at most 2,704 bytes. The longest line is about 1.2 KB
-- (a name of 200 and a tag of 64 characters of four bytes each,
-- TestTheLargestPlantsEventsAreRead); a field that could make an item
-- longer than 2.5 KB must not reach the line.
--
-- Adding a stored generated column rewrites the table, which holds at most
-- the retention's events, and the key is built twice, all under an
-- exclusive lock: writes and feed pages wait for it.
--
-- Backwards compatible within the release, as every migration: the line is
-- generated for every event, whichever binary writes it, and the previous
-- release's binary reads the columns it always read.

-- +goose Up
ALTER TABLE plant_events ADD COLUMN line text GENERATED ALWAYS AS (
    xid::text || ' ' || number::text || ' ' || type || ' '
    || (extract(epoch FROM created_at - '1970-01-01 00:00:00+00'::timestamptz) * 1000000)::bigint::text
    || ' ' || item
) STORED;
ALTER TABLE plant_events DROP CONSTRAINT plant_events_pkey;
ALTER TABLE plant_events ADD PRIMARY KEY (xid, number) INCLUDE (line);
ALTER TABLE plant_events SET (autovacuum_vacuum_insert_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0);

-- +goose Down
ALTER TABLE plant_events RESET (autovacuum_vacuum_insert_threshold, autovacuum_vacuum_insert_scale_factor);
ALTER TABLE plant_events DROP CONSTRAINT plant_events_pkey;
ALTER TABLE plant_events DROP COLUMN line;
ALTER TABLE plant_events ADD PRIMARY KEY (xid, number);
