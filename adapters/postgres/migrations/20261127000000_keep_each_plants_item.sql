-- A list page is rendered by the database (adapters/postgres/list.go). Each
-- plant keeps its item, its PlantItem JSON as the API writes it, rendered
-- once when the plant is written, so that a page aggregates stored text
-- instead of calling to_json and concatenating per plant on every read
-- (docs/performance.md, "List pages"). A trigger renders it, so that every
-- write, the service's or one made around it, leaves it right; it is no
-- index, and a change stays a HOT update where the page has room. The
-- column is added without a default, which rewrites nothing: plants stored
-- before have no item until they are written again, and a list renders
-- theirs on the fly with the same function.

-- +goose Up
-- +goose StatementBegin
-- plant_item is the PlantItem JSON: members in the API's order, no space,
-- tag left out when NULL. to_json escapes what JSON requires and nothing
-- else, as the service's encoder does for the text the CHECK constraints
-- admit. STABLE, as to_json is, so that the planner inlines it.
CREATE FUNCTION plant_item(id bigint, name text, tag text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT '{"id":' || id || ',"name":' || to_json(name) || coalesce(',"tag":' || to_json(tag), '') || '}'
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION keep_plant_item() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.item := plant_item(NEW.id, NEW.name, NEW.tag);
    RETURN NEW;
END
$$;
-- +goose StatementEnd
ALTER TABLE plants ADD COLUMN item text;
CREATE TRIGGER plants_keep_item BEFORE INSERT OR UPDATE OF id, name, tag ON plants
    FOR EACH ROW EXECUTE FUNCTION keep_plant_item();

-- +goose Down
DROP TRIGGER plants_keep_item ON plants;
ALTER TABLE plants DROP COLUMN item;
DROP FUNCTION keep_plant_item();
DROP FUNCTION plant_item(bigint, text, text);
