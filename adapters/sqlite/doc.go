// Package sqlite is the embedded plant store: a single SQLite file, reached
// through the pure-Go modernc.org/sqlite driver, so the service runs with no
// database server and no cgo.
//
// Durability: the file runs in WAL mode with synchronous=FULL, so every
// commit is fsynced before a create or a delete returns; an acknowledged
// write survives a crash of the process or of the operating system. The
// webhook's claims and settlements alone commit with synchronous=NORMAL (see
// relaxed): losing one to a power cut sends its event once more.
//
// Throughput: SQLite allows one writer at a time, and an fsync per commit
// would cap writes at the disk's fsync rate. Creates and deletes therefore
// go through a group-commit batcher: whatever arrives while one transaction
// commits is written by the next, one transaction and one fsync for the
// whole batch, in the order the writes arrived.
package sqlite
