// Package sqlite is the embedded plant store: a single SQLite file, reached
// through the pure-Go modernc.org/sqlite driver, so the service runs with no
// database server and no cgo.
//
// Durability: the file runs in WAL mode with synchronous=FULL, so every
// commit is fsynced before a write returns; an acknowledged write survives
// a crash of the process or of the operating system. The webhook's claims
// and settlements alone commit with synchronous=NORMAL (see relaxed):
// losing one to a power cut sends its event once more.
//
// Throughput: SQLite allows one writer at a time, and an fsync per commit
// would cap writes at the disk's fsync rate. Creates, updates and deletes
// therefore go through a group-commit batcher: whatever arrives while one
// transaction commits is written by the next, one transaction and one fsync
// for the whole batch, in the order the writes arrived. An update by
// function (UpdatePlant, DeletePlantIf) reads, decides and writes inside
// that transaction, so no other write comes between.
//
// Rows: each table has one row shape, a struct whose db tags name its
// columns (plantRow, eventRow). Every statement takes its column lists from
// it, and sqlx binds arguments from it and scans into it by column name, so
// no statement names a column by position; tests hold the row shapes to the
// tables and the statements to that rule.
//
// Rendering: the store renders no JSON. Each plant keeps its item, the
// PlantItem the service rendered (plantjson) when it wrote the plant, and
// a list page joins its plants' items in id order; a plant stored without
// one (before the column existed, or around the service) is rendered in Go
// when read. Each event keeps the item of its plant as it was created.
//
// Events: every write of a plant stores its event for the feed (GET /events)
// in the batch's transaction (feed.go). The single writer commits one
// transaction at a time, so the numbers AUTOINCREMENT hands out are the
// order of the commits, and the feed is in number order.
package sqlite
