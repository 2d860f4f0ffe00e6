-- +goose Up
-- Lists filtered by tag walk this index in id order: WHERE tag = ? AND
-- id >= ? ORDER BY id LIMIT ? is one range scan. Plants without a tag never
-- match a tag filter, so they stay out of it.
CREATE INDEX plants_tag_id ON plants (tag, id) WHERE tag IS NOT NULL;

-- +goose Down
DROP INDEX plants_tag_id;
