// Package postgres is the PostgreSQL plant store: an outbound adapter behind
// the application's store ports, built on sqlx and lib/pq.
//
// Concurrent creates are gathered by a group-commit batcher into one
// INSERT ... ON CONFLICT DO NOTHING statement and one commit per batch, and a
// caller is answered only after its batch committed. Driver errors never leave
// the package: lost or refused connections become application.ErrUnavailable,
// everything else a plain fault. The schema ships as embedded goose
// migrations, applied by Migrate.
//
// Every write of a plant stores its event for the feed (GET /events) in the
// same statement; feed.go says why a reader never skips one: the feed is in
// the order of the writing transactions' ids, read below the oldest one still
// running, and each statement holds its plants' advisory locks before it
// gets an id (lockPlants).
package postgres
