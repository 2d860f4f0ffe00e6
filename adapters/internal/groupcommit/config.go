package groupcommit

import "time"

// Defaults used for zero Config fields.
const (
	DefaultMaxBatch = 128
	DefaultWriters  = 1
)

// Config tunes a Batcher. The zero Config is usable.
type Config struct {
	// MaxBatch is the largest number of items given to one flush.
	// Zero or less means DefaultMaxBatch (128).
	MaxBatch int
	// MaxWait is how long a writer that found fewer than MaxBatch items
	// waits for more before flushing. Zero (the default) flushes what is
	// queued right away: items arriving during a flush form the next batch,
	// which batches under load and adds no latency when idle.
	MaxWait time.Duration
	// Writers is the number of goroutines flushing batches concurrently.
	// Zero or less means DefaultWriters (1). Use more than one only when
	// the store commits several transactions in parallel.
	Writers int
	// FlushTimeout bounds each flush through the context it receives, so a
	// hung store fails its batch instead of holding submitters forever.
	// Zero (the default) sets no bound.
	FlushTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.Writers <= 0 {
		c.Writers = DefaultWriters
	}
	if c.MaxWait < 0 {
		c.MaxWait = 0
	}
	if c.FlushTimeout < 0 {
		c.FlushTimeout = 0
	}
	return c
}
