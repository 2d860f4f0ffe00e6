-- An event keeps the W3C traceparent of the create that committed it, so
-- that its delivery attempts, later and maybe on another replica, link back
-- to the create's trace. A packed row holds them as one more parallel array,
-- NULL when none of its creates was traced (as none is with tracing off);
-- an element is NULL for an untraced create, and so is an unpacked event's.

-- +goose Up
ALTER TABLE webhook_events ADD COLUMN trace_parent text;
ALTER TABLE webhook_event_batches ADD COLUMN trace_parents text[];

-- +goose Down
ALTER TABLE webhook_events DROP COLUMN trace_parent;
ALTER TABLE webhook_event_batches DROP COLUMN trace_parents;
