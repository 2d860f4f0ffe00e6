-- An event keeps its plant as the service rendered it when the event was
-- committed (item: the body its receiver gets) instead of copies of the
-- plant's fields (name, tag). The table is rebuilt, as SQLite changes a
-- column's constraints, so that name may be NULL.
--
-- The events already stored get their item here, once, rendered by the
-- expression with which the list query rendered pages before plants kept
-- their items, and which the store suite held to the service's bytes:
-- json_object writes the members in the order given and no space, and
-- escapes what JSON requires and nothing else, as the service's encoder
-- does for the names and tags the plant rules admit. A test holds this
-- migration to those bytes too.
--
-- Backwards compatible within the release, as every migration: the
-- previous release's binary writes name and tag and no item, and the
-- service renders such an event from them when it reads it; the check
-- keeps every event renderable. Events of this release have no name and
-- tag: the previous binary cannot read them, and they wait for this
-- release (after the claim's lease, if that binary claimed them). The
-- release after this one drops name and tag.

-- +goose Up
CREATE TABLE webhook_events_with_items (
    id           TEXT    PRIMARY KEY,
    url          TEXT    NOT NULL,
    plant_id     INTEGER NOT NULL,
    item         TEXT    NULL,
    name         TEXT    NULL,
    tag          TEXT    NULL,
    created_at   TEXT    NOT NULL,
    retry_from   TEXT    NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      TEXT    NOT NULL,
    claim        TEXT    NULL,
    last_error   TEXT    NULL,
    failed_at    TEXT    NULL,
    trace_parent TEXT    NULL,
    CHECK (item IS NOT NULL OR name IS NOT NULL)
) STRICT;

INSERT INTO webhook_events_with_items
    (id, url, plant_id, item, created_at, retry_from, attempts, next_at, claim, last_error, failed_at, trace_parent)
SELECT id, url, plant_id,
       CASE WHEN tag IS NULL THEN json_object('id', plant_id, 'name', name)
            ELSE json_object('id', plant_id, 'name', name, 'tag', tag) END,
       created_at, retry_from, attempts, next_at, claim, last_error, failed_at, trace_parent
FROM webhook_events;

DROP TABLE webhook_events;
ALTER TABLE webhook_events_with_items RENAME TO webhook_events;
CREATE INDEX webhook_events_url_due ON webhook_events (url, next_at) WHERE failed_at IS NULL;

-- +goose Down
CREATE TABLE webhook_events_with_fields (
    id           TEXT    PRIMARY KEY,
    url          TEXT    NOT NULL,
    plant_id     INTEGER NOT NULL,
    name         TEXT    NOT NULL,
    tag          TEXT    NULL,
    created_at   TEXT    NOT NULL,
    retry_from   TEXT    NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      TEXT    NOT NULL,
    claim        TEXT    NULL,
    last_error   TEXT    NULL,
    failed_at    TEXT    NULL,
    trace_parent TEXT    NULL
) STRICT;

INSERT INTO webhook_events_with_fields
    (id, url, plant_id, name, tag, created_at, retry_from, attempts, next_at, claim, last_error, failed_at, trace_parent)
SELECT id, url, plant_id,
       CASE WHEN item IS NULL THEN name ELSE json_extract(item, '$.name') END,
       CASE WHEN item IS NULL THEN tag ELSE json_extract(item, '$.tag') END,
       created_at, retry_from, attempts, next_at, claim, last_error, failed_at, trace_parent
FROM webhook_events;

DROP TABLE webhook_events;
ALTER TABLE webhook_events_with_fields RENAME TO webhook_events;
CREATE INDEX webhook_events_url_due ON webhook_events (url, next_at) WHERE failed_at IS NULL;
