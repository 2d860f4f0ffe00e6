package groupcommit

import "time"

// Defaults used for zero Config fields.
const (
	DefaultMaxBatch   = 128
	DefaultMaxWriters = 1
	// DefaultMinQueued is the smallest default queue: room for a burst of
	// a thousand clients at once, the API's connection limit.
	DefaultMinQueued = 1024
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
	// MaxWriters bounds how many batches flush at once: the Batcher starts
	// at one and adapts within this bound (see limit), so a store gives it
	// what it can run in parallel, such as its connection pool. Zero or less
	// means DefaultMaxWriters (1): one batch at a time.
	MaxWriters int
	// MaxQueued bounds the items waiting to be taken into a batch; Submit
	// refuses more with ErrOverloaded. Zero or less means MaxBatch times
	// MaxWriters: a full batch for every writer, or DefaultMinQueued,
	// whichever is larger.
	MaxQueued int
	// FlushTimeout bounds each flush through the context it receives, so a
	// hung store fails its batch instead of holding submitters forever.
	// Zero (the default) sets no bound.
	FlushTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxWriters <= 0 {
		c.MaxWriters = DefaultMaxWriters
	}
	if c.MaxQueued <= 0 {
		c.MaxQueued = max(c.MaxBatch*c.MaxWriters, DefaultMinQueued)
	}
	if c.MaxWait < 0 {
		c.MaxWait = 0
	}
	if c.FlushTimeout < 0 {
		c.FlushTimeout = 0
	}
	return c
}
