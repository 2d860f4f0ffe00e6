// Package scaleout tests the PostgreSQL store on PostgreSQL's scale-out
// stack (PRODUCT.md §11): through PgBouncer in transaction mode, and on a
// primary with a synchronous hot standby that is promoted when the primary
// dies. It holds only tests and the PgBouncer they start; the primary and
// its standby, and the helpers that start servers from the Debian packages
// in temporary directories on free ports, are pgcluster's.
//
// Without pgbouncer or PostgreSQL's server programs the tests skip with one
// line, unless CI=true, where they fail: a CI run must never pass by
// skipping them (.ci/run installs pgbouncer where it is missing).
package scaleout
