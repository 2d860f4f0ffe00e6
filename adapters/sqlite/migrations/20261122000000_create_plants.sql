-- +goose Up
-- id is the rowid itself (INTEGER PRIMARY KEY): every int64 is a valid id.
-- Lengths are counted in characters (code points), as the plant rules count
-- them. The checks repeat the domain's limits as a second line of defence
-- against rows written around the application.
-- created_at is UTC in a fixed-width RFC 3339 form with nanoseconds
-- (2026-11-22T00:00:00.000000000Z), so text order is time order.
CREATE TABLE plants (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    tag        TEXT    NULL     CHECK (tag IS NULL OR length(tag) BETWEEN 1 AND 64),
    created_by TEXT    NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;

-- +goose Down
DROP TABLE plants;
