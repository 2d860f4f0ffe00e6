-- One row that the store writes to confirm what it shows (confirm.go):
-- after a session was lost, or another server met, a commit of the store's
-- own that the synchronous standby must acknowledge, which it does only
-- once it has every commit before it. A row is needed, not a function: a
-- transaction that writes no WAL commits without waiting for the standby.
--
-- Backwards compatible within the release, as every migration: the
-- previous release neither reads nor writes the table.

-- +goose Up
CREATE TABLE store_confirmations (
    id           integer PRIMARY KEY CHECK (id = 1),
    confirmed_at timestamptz NOT NULL
);
INSERT INTO store_confirmations VALUES (1, now());

-- +goose Down
DROP TABLE store_confirmations;
