package postgres

import (
	"log/slog"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
)

// Defaults used for zero Config fields.
const (
	// DefaultWriters is how many batches commit in parallel, each on its own
	// connection. Two keep the server busy while one batch waits for its
	// commit to reach disk; more split the waiting creates into smaller
	// batches, which cost the server more per row (docs/performance.md).
	DefaultWriters = 2
	// DefaultReaders is how many gathered reads run at once, each one query
	// on its own connection for every read waiting. Two gave the most point
	// reads per second on two cores (1, 2 and 4 measured, docs/performance.md):
	// fewer, bigger queries cost the server less per read.
	DefaultReaders = 2
	// DefaultMaxOpenConns leaves room beside the writers and the readers
	// for lists, readiness
	// pings, re-reads after a lost race and the row-by-row fallback; more
	// would only keep idle server processes.
	DefaultMaxOpenConns = 8
	// DefaultConnMaxLifetime rotates connections so that a failover or a
	// DNS change is picked up without a restart.
	DefaultConnMaxLifetime = 30 * time.Minute
	// DefaultConnMaxIdleTime closes connections left over from a burst.
	DefaultConnMaxIdleTime = 5 * time.Minute
	// DefaultQueryTimeout bounds every round trip; a store that does not
	// answer in time is reported unavailable rather than holding requests.
	DefaultQueryTimeout = 5 * time.Second
	// DefaultConnectTimeout is how long Open waits for an unreachable
	// database before giving up.
	DefaultConnectTimeout = 30 * time.Second
)

// Config says where the database is and how to use it. Only URL is required;
// zero fields take the defaults above.
type Config struct {
	// URL is a postgres:// or postgresql:// connection URL. It may carry a
	// password; the store never logs or returns it.
	URL string
	// MaxOpenConns caps the pool (DefaultMaxOpenConns). It should exceed
	// Batch.Writers.
	MaxOpenConns int
	// MaxIdleConns is how many connections stay open while idle; zero means
	// MaxOpenConns, so writers do not reconnect between bursts.
	MaxIdleConns int
	// ConnMaxLifetime (DefaultConnMaxLifetime) and ConnMaxIdleTime
	// (DefaultConnMaxIdleTime) retire connections.
	ConnMaxLifetime time.Duration
	ConnMaxIdleTime time.Duration
	// QueryTimeout bounds each batch and each ping (DefaultQueryTimeout).
	QueryTimeout time.Duration
	// ConnectTimeout is how long Open retries an unreachable database
	// (DefaultConnectTimeout). A deadline on Open's context also ends it.
	ConnectTimeout time.Duration
	// Batch tunes group commit. Writers defaults to DefaultWriters here.
	Batch groupcommit.Config
	// Receivers are the webhook URLs every stored plant is announced to,
	// through the outbox; none keeps no events.
	Receivers []string
	// Readers is how many gathered point reads, and as many gathered lists,
	// run at once (DefaultReaders).
	Readers int
	// Logger receives what the store keeps from its callers: driver error
	// details behind ErrUnavailable and faults. Nil discards them.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.MaxOpenConns <= 0 {
		c.MaxOpenConns = DefaultMaxOpenConns
	}
	if c.MaxIdleConns <= 0 {
		c.MaxIdleConns = c.MaxOpenConns
	}
	if c.ConnMaxLifetime <= 0 {
		c.ConnMaxLifetime = DefaultConnMaxLifetime
	}
	if c.ConnMaxIdleTime <= 0 {
		c.ConnMaxIdleTime = DefaultConnMaxIdleTime
	}
	if c.QueryTimeout <= 0 {
		c.QueryTimeout = DefaultQueryTimeout
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.Readers <= 0 {
		c.Readers = DefaultReaders
	}
	if c.Batch.Writers <= 0 {
		c.Batch.Writers = DefaultWriters
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
