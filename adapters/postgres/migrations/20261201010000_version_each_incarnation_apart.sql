-- A plant's version tells one state of its row from every other state the
-- id has had: every write sets it to a value of the sequence plant_versions,
-- which never repeats, instead of counting from 1 at each create. An update
-- decided on the version it read (adapters/postgres/update.go) then cannot
-- take a plant that was deleted and created again meanwhile, whose count
-- would have started over at the same value, for the one it read: the
-- change of a stale plant, or the conditional delete checked on it, would
-- have been written over the new one. The service writes no version at all:
-- a create takes the column's default, and follow_plant_writes() gives
-- every update one, the service's and those made around it alike.
--
-- The sequence starts above any count the earlier scheme reached.
--
-- Backwards compatible within the release, as every migration: the
-- previous release's binary still writes over the version it read, and
-- sets the version it read plus one, which follow_plant_writes() replaces by
-- a value of the sequence; its creates still insert version 1, and two of
-- its incarnations of one id can still be taken for each other, as before,
-- until it is gone.

-- +goose Up
CREATE SEQUENCE plant_versions AS bigint START WITH 4294967296;
ALTER TABLE plants ALTER COLUMN version SET DEFAULT nextval('plant_versions');
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION follow_plant_writes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.item IS NOT DISTINCT FROM OLD.item AND NEW IS DISTINCT FROM OLD THEN
        NEW.item := NULL;
    END IF;
    IF NEW.version IS NOT DISTINCT FROM OLD.version OR NEW.version = OLD.version + 1 THEN
        NEW.version := nextval('plant_versions');
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION follow_plant_writes() RETURNS trigger
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
ALTER TABLE plants ALTER COLUMN version SET DEFAULT 1;
DROP SEQUENCE plant_versions;
