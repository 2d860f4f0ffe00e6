-- Every plant keeps its item: the plant as the API renders a PlantItem,
-- rendered by the service (plantjson) and written with every write of the
-- plant, so that a list page only joins the items of its plants. A plant
-- stored before this migration has none (NULL) and is rendered by the
-- service when read, as is one written around the service.
--
-- An UPDATE around the service that leaves the item as it was may have
-- changed what it shows, and would serve a stale item: the trigger clears
-- it instead, whatever columns the UPDATE set, so that it names none and a
-- new column needs nothing of it. The service writes a new item with every
-- write, so its own updates never fire it; SQLite's triggers do not fire
-- themselves (recursive_triggers is off).

-- +goose Up
ALTER TABLE plants ADD COLUMN item TEXT;

-- +goose StatementBegin
CREATE TRIGGER plants_item_follows_the_plant AFTER UPDATE ON plants
WHEN NEW.item IS OLD.item AND NEW.item IS NOT NULL
BEGIN
    UPDATE plants SET item = NULL WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER plants_item_follows_the_plant;
ALTER TABLE plants DROP COLUMN item;
