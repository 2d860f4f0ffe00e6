// Package postgres is the PostgreSQL plant store: an outbound adapter behind
// the application's store ports, built on sqlx and lib/pq.
//
// Concurrent creates are gathered by a group-commit batcher into one
// INSERT ... ON CONFLICT DO NOTHING statement and one commit per batch, and a
// caller is answered only after its batch committed. Driver errors never leave
// the package: lost or refused connections become application.ErrUnavailable,
// everything else a plain fault. The schema ships as embedded goose
// migrations, applied by Migrate.
package postgres
