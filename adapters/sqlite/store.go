package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/application"
)

// Config says which file to use and how to batch writes.
type Config struct {
	// Path is the database file, created when missing: the part after
	// "sqlite:" in PLANTSTORE_DATABASE_URL. It must name a file; an
	// in-memory database would not be shared between connections.
	Path string
	// Batch tunes group commit. MaxWriters is always 1: SQLite has one writer.
	Batch groupcommit.Config
	// Receivers are the webhook URLs the outbox announces to; none keeps no
	// events.
	Receivers []string
	// Payload says what is announced to them: every stored plant
	// (application.PlantPayload, the default), or the event of every write
	// (application.EventPayload).
	Payload application.Payload
}

// Store is the embedded plant store. It implements the application's store ports
// and is safe for concurrent use. Build one with Open, close it with Close.
type Store struct {
	path  string
	write *sqlx.DB // one connection: every write and the schema go through it
	read  *sqlx.DB // readers, which WAL lets run beside the writer

	batcher *groupcommit.Batcher[write, writeOutcome]
	// Statements prepared on the write connection the first time a batch
	// needs them (the table may not exist at Open). Only the single writer
	// goroutine touches them until Close.
	stmts statements
	reads readStatements // the read pool's

	metrics   *metrics
	receivers []string
	envelopes bool          // the event payload: every event is announced (webhook_envelopes)
	committed chan struct{} // a signal after a batch stored events
	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error

	// beforeFlush, when set by tests, runs at the start of every flush.
	beforeFlush func()
}

// Open opens the store on cfg.Path, creating the file if needed, and checks
// that it can be reached. It does not migrate; call Migrate for that.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	switch cfg.Path {
	case "":
		return nil, errors.New("sqlite: the database path is empty")
	case ":memory:":
		return nil, errors.New("sqlite: an in-memory database is not durable nor shared between connections; give a file path")
	}
	write, err := sqlx.Open("sqlite", dsn(cfg.Path, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxIdleTime(0)
	write.SetConnMaxLifetime(0)
	// The write connection goes first: it creates the file and switches it
	// to WAL, which the query-only readers could not do.
	if err := write.PingContext(ctx); err != nil {
		_ = write.Close()
		return nil, edgeError("open "+cfg.Path, err)
	}
	read, err := sqlx.Open("sqlite", dsn(cfg.Path, true))
	if err != nil {
		_ = write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	read.SetMaxOpenConns(readConns)
	read.SetMaxIdleConns(readConns)
	if err := read.PingContext(ctx); err != nil {
		_ = read.Close()
		_ = write.Close()
		return nil, edgeError("open "+cfg.Path, err)
	}

	s := &Store{path: cfg.Path, write: write, read: read, receivers: cfg.Receivers, committed: make(chan struct{}, 1),
		envelopes: cfg.Payload == application.EventPayload}
	s.metrics = newMetrics(s)
	batch := cfg.Batch
	batch.MaxWriters = 1
	s.batcher = groupcommit.New(batch, s.flush)
	return s, nil
}

// readConns bounds the read pool: reads run in parallel beside the writer,
// one per core, and never fewer than two so that a slow one does not block
// the others.
var readConns = max(2, runtime.GOMAXPROCS(0))

// Ping reports whether the store answers and its schema is in place, for
// readiness. It reads through the read pool, so it is not held up by a
// batch being committed.
func (s *Store) Ping(ctx context.Context) error {
	if s.closing.Load() {
		return fmt.Errorf("sqlite: ping: store closed: %w", application.ErrUnavailable)
	}
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM plants LIMIT 1)`).Scan(&n); err != nil {
		return edgeError("ping", err)
	}
	return nil
}

// Close stops accepting writes, waits until the writes already submitted
// are committed and answered, then closes the database. Writes after Close
// fail with application.ErrUnavailable. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		s.batcher.Close()
		var errs []error
		if s.stmts != nil {
			errs = append(errs, s.stmts.close())
		}
		errs = append(errs, s.reads.close(), s.read.Close(), s.write.Close())
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("sqlite: close: %v", err)
		}
	})
	return s.closeErr
}
