-- The service renders a plant's item (its PlantItem JSON, adapters/internal/
-- plantjson) itself and writes it with every write of the plant; the store
-- keeps and aggregates those bytes and renders nothing. Each plant gets a
-- version, which every write advances: an update by function writes only
-- over the version it read (adapters/postgres/update.go). Events keep the
-- rendered plant instead of copies of its name and tag.
--
-- Backwards compatible within the release, as every migration: the previous
-- release's binary keeps working while replicas of both run.
-- - Its writes set no item and no version. follow_plant_writes() advances the
--   version of every update that did not, and clears the item of an update
--   that changed the row but not the item, so that a stale item is never
--   served: the service renders a plant without one when it reads it. For
--   the same reason a create by the previous binary, or a row stored before
--   any item, has none.
-- - Its lists render missing items with plant_item(), which stays until the
--   release after this one.
-- - Its events carry name and tag: event_item() and event_items() fill in
--   their items, so that this release delivers them. Events of this
--   release have no name and tag; the previous binary cannot claim them,
--   and they wait for a replica of this release (after the claim's lease,
--   if it tried).
-- The release after this one drops plant_item(), event_item(),
-- event_items() and the events' name and tag columns.

-- +goose Up
ALTER TABLE plants ADD COLUMN version bigint NOT NULL DEFAULT 1;
DROP TRIGGER plants_keep_item ON plants;
DROP FUNCTION keep_plant_item();
-- +goose StatementBegin
CREATE FUNCTION follow_plant_writes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.item IS NOT DISTINCT FROM OLD.item AND NEW IS DISTINCT FROM OLD THEN
        NEW.item := NULL;
    END IF;
    IF NEW.version = OLD.version THEN
        NEW.version := OLD.version + 1;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER plants_follow_writes BEFORE UPDATE ON plants
    FOR EACH ROW EXECUTE FUNCTION follow_plant_writes();

ALTER TABLE webhook_events ADD COLUMN item text;
ALTER TABLE webhook_events ALTER COLUMN name DROP NOT NULL;
ALTER TABLE webhook_event_batches ADD COLUMN items text[];
ALTER TABLE webhook_event_batches ALTER COLUMN names DROP NOT NULL, ALTER COLUMN tags DROP NOT NULL;
UPDATE webhook_events SET item = plant_item(plant_id, name, tag);
UPDATE webhook_event_batches SET items = ARRAY(
    SELECT plant_item(e.plant_id, e.name, e.tag)
    FROM unnest(plant_ids, names, tags) WITH ORDINALITY AS e (plant_id, name, tag, n)
    ORDER BY e.n);
-- +goose StatementBegin
CREATE FUNCTION event_item() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.item IS NULL THEN
        NEW.item := plant_item(NEW.plant_id, NEW.name, NEW.tag);
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION event_items() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.items IS NULL THEN
        NEW.items := ARRAY(
            SELECT plant_item(e.plant_id, e.name, e.tag)
            FROM unnest(NEW.plant_ids, NEW.names, NEW.tags) WITH ORDINALITY AS e (plant_id, name, tag, n)
            ORDER BY e.n);
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER webhook_events_item BEFORE INSERT ON webhook_events
    FOR EACH ROW EXECUTE FUNCTION event_item();
CREATE TRIGGER webhook_event_batches_items BEFORE INSERT ON webhook_event_batches
    FOR EACH ROW EXECUTE FUNCTION event_items();
ALTER TABLE webhook_events ALTER COLUMN item SET NOT NULL;
ALTER TABLE webhook_event_batches ALTER COLUMN items SET NOT NULL;

-- +goose Down
DROP TRIGGER webhook_event_batches_items ON webhook_event_batches;
DROP TRIGGER webhook_events_item ON webhook_events;
DROP FUNCTION event_items();
DROP FUNCTION event_item();
UPDATE webhook_events SET name = item::json->>'name', tag = item::json->>'tag' WHERE name IS NULL;
UPDATE webhook_event_batches SET
    names = ARRAY(SELECT i::json->>'name' FROM unnest(items) WITH ORDINALITY AS e (i, n) ORDER BY e.n),
    tags = ARRAY(SELECT i::json->>'tag' FROM unnest(items) WITH ORDINALITY AS e (i, n) ORDER BY e.n)
WHERE names IS NULL;
ALTER TABLE webhook_event_batches DROP COLUMN items;
ALTER TABLE webhook_event_batches ALTER COLUMN names SET NOT NULL, ALTER COLUMN tags SET NOT NULL;
ALTER TABLE webhook_events DROP COLUMN item;
ALTER TABLE webhook_events ALTER COLUMN name SET NOT NULL;
DROP TRIGGER plants_follow_writes ON plants;
DROP FUNCTION follow_plant_writes();
-- +goose StatementBegin
CREATE FUNCTION keep_plant_item() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.item := plant_item(NEW.id, NEW.name, NEW.tag);
    RETURN NEW;
END
$$;
-- +goose StatementEnd
UPDATE plants SET item = plant_item(id, name, tag) WHERE item IS NULL;
CREATE TRIGGER plants_keep_item BEFORE INSERT OR UPDATE OF id, name, tag ON plants
    FOR EACH ROW EXECUTE FUNCTION keep_plant_item();
ALTER TABLE plants DROP COLUMN version;
