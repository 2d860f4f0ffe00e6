package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// Store keeps plants in PostgreSQL. It is safe for concurrent use.
type Store struct {
	db      *sqlx.DB
	cfg     Config
	log     *slog.Logger
	target  string // host:port, the only part of the URL ever printed
	stmts   statements
	metrics *metrics
	batcher *groupcommit.Batcher[write, outcome]
	reads   *groupcommit.Batcher[domain.ID, found]
	lists   *groupcommit.Batcher[application.ListQuery, application.Page]
	feeds   *groupcommit.Batcher[application.FeedQuery, application.EventPage]
	// feedRows is the size of the rows of events pages read lately.
	feedRows rowSize

	receivers  string // the text[] literal of cfg.Receivers
	committed  chan struct{}
	others     others // see ClaimDue
	outboxOnce sync.Once
	outbox     *sqlx.DB // the outbox's bookkeeping; see outboxDB
	outboxErr  error

	watch      *serverWatch   // what the sessions of both pools learn of the server
	confirm    confirmation   // see confirm.go
	background sync.WaitGroup // the confirmation in flight

	closeOnce sync.Once
	closeErr  error
}

// Open connects to the database at cfg.URL. It retries an unreachable
// database for cfg.ConnectTimeout (or until ctx ends) and then fails with one
// line that names the host and the reason, never the password. It does not
// migrate; call Migrate for that.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.withDefaults()
	if cfg.URL == "" {
		return nil, errors.New("store: no database URL")
	}
	c, err := connector(cfg.URL, cfg.Pooler)
	if err != nil {
		return nil, err
	}
	watch := &serverWatch{}
	db := sqlx.NewDb(sql.OpenDB(newSessions(c, watch, loginBound(cfg.URL, cfg.QueryTimeout))), "postgres")
	db.SetMaxOpenConns(cfg.MaxOpenConns)
	db.SetMaxIdleConns(cfg.MaxIdleConns)
	db.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	db.SetConnMaxIdleTime(cfg.ConnMaxIdleTime)

	s := &Store{
		db:        db,
		cfg:       cfg,
		log:       cfg.Logger,
		target:    target(cfg.URL),
		receivers: textArray(cfg.Receivers, nil),
		committed: make(chan struct{}, 1),
		stmts:     statements{unprepared: cfg.Pooler.shared()},
		watch:     watch,
	}
	s.metrics = newMetrics(db.DB, func() int { return s.batcher.Queued() }, map[string]batchCounts{
		"write":  {func() int { return s.batcher.Writers() }, func() uint64 { return s.batcher.Shed() }},
		"find":   {func() int { return s.reads.Writers() }, func() uint64 { return s.reads.Shed() }},
		"list":   {func() int { return s.lists.Writers() }, func() uint64 { return s.lists.Shed() }},
		"events": {func() int { return s.feeds.Writers() }, func() uint64 { return s.feeds.Shed() }},
	})
	if err := s.waitReady(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	// Every batch answers only what the synchronous standby has
	// confirmed (confirm.go).
	s.batcher = groupcommit.New(cfg.Batch, shownBatch(s, s.flush))
	// Reads gather as writes do, as many queries at once as they gain from.
	s.reads = groupcommit.New(groupcommit.Config{MaxBatch: cfg.Batch.MaxBatch, MaxWriters: cfg.MaxOpenConns}, shownBatch(s, s.findBatch))
	s.lists = groupcommit.New(groupcommit.Config{MaxBatch: maxListsPerQuery, MaxWriters: cfg.MaxOpenConns}, shownBatch(s, s.listBatch))
	s.feeds = groupcommit.New(groupcommit.Config{MaxBatch: maxListsPerQuery, MaxWriters: cfg.MaxOpenConns}, shownBatch(s, s.feedBatch))
	return s, nil
}

// Ping reports whether the database answers, for readiness probes: nil, or
// an error matching application.ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
	defer cancel()
	if err := s.db.PingContext(ctx); err != nil {
		if classify(err) == canceled {
			return fmt.Errorf("store: %w", context.Canceled)
		}
		s.log.Debug("store ping failed", "err", err)
		return fmt.Errorf("store: %w (%s)", application.ErrUnavailable, reason(err))
	}
	return nil
}

// Close stops accepting writes, commits those already queued, and closes
// the pool. A write still waiting for the synchronous standby a query
// timeout after Close began has its session cut, and so has any write
// after it (writeCalls.severAll): its commit goes on waiting on the server,
// not visible, and its outcome stays unknown. It is safe to call more than
// once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		sever := time.AfterFunc(s.cfg.QueryTimeout, s.watch.writes.severAll)
		defer sever.Stop()
		s.batcher.Close()
		s.reads.Close()
		s.lists.Close()
		s.feeds.Close()
		s.watch.writes.severAll() // the confirmation's, if one waits
		s.background.Wait()
		s.stmts.close()
		s.closeErr = errors.Join(s.db.Close(), s.closeOutbox())
	})
	return s.closeErr
}
