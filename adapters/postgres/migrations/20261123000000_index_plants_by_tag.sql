-- Lists filtered by tag walk this index in id order: WHERE tag = $1 AND
-- id >= $2 ORDER BY id LIMIT $3 is one range scan. Plants without a tag
-- never match a tag filter, so they stay out of it. CONCURRENTLY keeps
-- creates and deletes running while the index builds on a large table.

-- +goose NO TRANSACTION
-- +goose Up
DROP INDEX CONCURRENTLY IF EXISTS plants_tag_id; -- an invalid one left by a build that failed
CREATE INDEX CONCURRENTLY plants_tag_id ON plants (tag, id) WHERE tag IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS plants_tag_id;
