package postgres

import (
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/application"
)

// Defaults used for zero Config fields.
const (
	// MinMaxOpenConns is the smallest default pool. The default grows with
	// the machine (DefaultMaxOpenConns): batches of writes, of point reads
	// and of lists each run as many at once as they gain from, up to the
	// pool, and a large machine's server runs more of them in parallel.
	MinMaxOpenConns = 8
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
	// MaxOpenConns caps the pool (DefaultMaxOpenConns()), and with it how
	// many batches of each kind run at once.
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
	// Batch tunes group commit. MaxWriters defaults to three quarters of
	// MaxOpenConns here (defaultWriters).
	Batch groupcommit.Config
	// Receivers are the webhook URLs the outbox announces to; none keeps no
	// events.
	Receivers []string
	// Payload says what is announced to them: every stored plant
	// (application.PlantPayload, the default), or the event of every write
	// (application.EventPayload).
	Payload application.Payload
	// Logger receives what the store keeps from its callers: driver error
	// details behind ErrUnavailable and faults. Nil discards them.
	Logger *slog.Logger
	// Pooler is what stands between the store and PostgreSQL (PoolerNone).
	Pooler Pooler
}

// Pooler names what the store talks to: PostgreSQL itself or a pooler that
// shares server sessions among its clients.
type Pooler string

const (
	// PoolerNone: every connection is a session of its own, which keeps
	// session settings and prepared statements for its lifetime.
	PoolerNone Pooler = "none"
	// PoolerTransaction: a transaction pooler (PgBouncer's pool_mode =
	// transaction) hands each transaction to whichever server session is
	// free. The store then keeps no session state: no start-up options (the
	// settings it needs are set per transaction: JIT off for lists, the
	// outbox's commits without waiting for the disk), no named prepared
	// statements (each statement is parsed, bound and run in one exchange),
	// no session locks (migrations lock a table row).
	PoolerTransaction Pooler = "transaction"
)

// ParsePooler reads a Pooler by its name; "" is PoolerNone.
func ParsePooler(name string) (Pooler, error) {
	switch p := Pooler(name); p {
	case "", PoolerNone:
		return PoolerNone, nil
	case PoolerTransaction:
		return p, nil
	}
	return "", fmt.Errorf("unknown pooler %q (none or transaction)", name)
}

// shared reports whether server sessions are shared with other clients.
func (p Pooler) shared() bool { return p == PoolerTransaction }

// DefaultMaxOpenConns is the pool when none is configured: two connections
// per core the service may use, and at least MinMaxOpenConns.
func DefaultMaxOpenConns() int { return max(MinMaxOpenConns, 2*runtime.GOMAXPROCS(0)) }

func (c Config) withDefaults() Config {
	if c.MaxOpenConns <= 0 {
		c.MaxOpenConns = DefaultMaxOpenConns()
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
	if c.Batch.MaxWriters <= 0 {
		c.Batch.MaxWriters = defaultWriters(c.MaxOpenConns)
	}
	if c.Pooler == "" {
		c.Pooler = PoolerNone
	}
	if c.Payload == "" {
		c.Payload = application.PlantPayload
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// defaultWriters is how many write batches may run at once on a pool of
// conns: three quarters of it, at least one. A write's commit may wait for
// the synchronous standby as long as it is gone, holding its session
// (writeCalls): the rest of the pool is left to reads, which go on.
func defaultWriters(conns int) int { return max(1, conns-conns/4) }
