// Package groupcommit gathers concurrent writes into batches so that a store
// pays for one commit per batch instead of one per write.
//
// Submitters hand items to a Batcher and block. Writer goroutines take the
// items that are waiting, up to Config.MaxBatch, call the flush function once
// for the whole batch (which commits it), and only then answer each submitter.
// While one flush runs, the next batch accumulates on its own, so batching
// grows with load without adding latency when the store is idle. How many
// batches flush at once adapts to what the store shows (see limit): few and
// big where more would only contend, many where they overlap for free.
package groupcommit
