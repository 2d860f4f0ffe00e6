-- An event keeps the W3C traceparent of the create that committed it, so
-- that its delivery attempts link back to the create's trace. NULL when the
-- create was not traced, as every create is with tracing off.

-- +goose Up
ALTER TABLE webhook_events ADD COLUMN trace_parent TEXT;

-- +goose Down
ALTER TABLE webhook_events DROP COLUMN trace_parent;
