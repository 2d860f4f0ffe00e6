-- The events of one write statement are one row of plant_events: lines
-- holds their feed lines (as line held one), one a line in feed order,
-- count how many, and number the last one's number, so that the key
-- (xid, number) still orders the rows as the feed orders their events and
-- a row follows a position exactly when one of its events does. A row of
-- one event a line per event cost PostgreSQL its tuple, its key entry and
-- its WAL record each: about 4 µs of CPU per event, of a delete's 22
-- (docs/performance.md, "What an event costs a write"). A row holding a
-- batch of lines costs one of each, and once it is longer than about 2 KB
-- PostgreSQL compresses it, with lz4 where the server was built with it.
--
-- Every stored row becomes a row of one event as it is: renaming a column
-- and adding one with a constant default rewrite nothing. A statement that
-- stores an event around the service still may (docs/operations.md,
-- "The event feed"), each event a row of its own.
--
-- Down splits every row back into one row per event.
--
-- Backwards compatible within the release, as every migration: the previous
-- release knows nothing of plant_events.

-- +goose Up
ALTER TABLE plant_events RENAME COLUMN line TO lines;
ALTER TABLE plant_events ADD COLUMN count integer NOT NULL DEFAULT 1 CHECK (count > 0);
-- +goose StatementBegin
DO $$
BEGIN
    ALTER TABLE plant_events ALTER COLUMN lines SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL; -- built without lz4: the default compression, pglz
END
$$;
-- +goose StatementEnd

-- +goose Down
INSERT INTO plant_events (xid, number, lines, created_at)
SELECT e.xid, split_part(l.line, ' ', 2)::bigint, l.line, e.created_at
FROM plant_events AS e
CROSS JOIN LATERAL unnest(string_to_array(e.lines, E'\n')) AS l (line)
WHERE e.count > 1 AND split_part(l.line, ' ', 2)::bigint <> e.number;
UPDATE plant_events SET lines = substring(lines FROM '[^\n]*$') WHERE count > 1;
ALTER TABLE plant_events ALTER COLUMN lines SET COMPRESSION default;
ALTER TABLE plant_events DROP COLUMN count;
ALTER TABLE plant_events RENAME COLUMN lines TO line;
