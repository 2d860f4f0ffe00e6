-- Every plant keeps its item: the plant as the API renders a PlantItem,
-- rendered by the service (plantjson) and written with every write of the
-- plant, so that a list page only joins the items of its plants. A plant
-- stored before this migration has none (NULL) and is rendered by the
-- service when read, as is one written around the service.
--
-- An UPDATE around the service that changes what the item shows (the id,
-- the name, the tag) and leaves the item as it was would serve a stale item:
-- the trigger clears it instead. The service writes a new item with every
-- change, so its own updates never fire it. A column the item shows joins
-- the trigger's lists.

-- +goose Up
ALTER TABLE plants ADD COLUMN item TEXT;

-- +goose StatementBegin
CREATE TRIGGER plants_item_follows_the_plant AFTER UPDATE OF id, name, tag ON plants
WHEN NEW.item IS OLD.item AND (NEW.id IS NOT OLD.id OR NEW.name IS NOT OLD.name OR NEW.tag IS NOT OLD.tag)
BEGIN
    UPDATE plants SET item = NULL WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER plants_item_follows_the_plant;
ALTER TABLE plants DROP COLUMN item;
