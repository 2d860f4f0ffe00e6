-- +goose Up
-- Each receiver's events are claimed apart from the others', so that one
-- that hangs holds back only its own: a claim scans one receiver's due
-- events, oldest first. Nothing else reads the index of due events across
-- receivers.
CREATE INDEX webhook_events_url_due ON webhook_events (url, next_at) WHERE failed_at IS NULL;
DROP INDEX webhook_events_due;

-- +goose Down
CREATE INDEX webhook_events_due ON webhook_events (next_at) WHERE failed_at IS NULL;
DROP INDEX webhook_events_url_due;
