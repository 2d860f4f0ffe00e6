package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/plantstore/plantstore/adapters/internal/groupcommit"
	"github.com/plantstore/plantstore/application"
)

// What the store shows is what a failover keeps. With a synchronous
// standby, PostgreSQL makes a commit visible to other sessions only once
// the standby has confirmed it, unless the wait for the standby ends early:
// a cancel request, a terminated session, a crash and restart of the
// primary each leave a commit visible that the standby may never get, and
// that a promotion then loses. Every answer that shows what the store read
// (a plant, a page, a replayed create, a change that changed nothing, a
// feed page, a webhook event) could show such a commit.
//
// The store never cuts a commit's wait short itself (writeCalls). For the
// rest, its sessions count every event that may have let such a commit
// through (serverWatch.losses), and before a batch answers, the store makes
// sure a confirmation covers every loss counted until the batch ended: a
// commit of its own that the synchronous standby must acknowledge, which
// it does only once it has every commit before it. Until then the batch's
// answers are ErrUnavailable. While nothing is lost, a batch pays a timer
// and four atomic loads, and takes none of the store's locks.

// confirmStatement writes the one row of store_confirmations: WAL whose
// commit the synchronous standby must acknowledge.
const confirmStatement = `UPDATE store_confirmations SET confirmed_at = statement_timestamp() WHERE id = 1`

// errUnconfirmedReads is why a batch is not answered while its
// confirmation is not done.
var errUnconfirmedReads = fmt.Errorf("store: %w (waiting for the synchronous standby to confirm what the store would show)", application.ErrUnavailable)

// confirmation is the store's latest confirmation and the one in flight.
type confirmation struct {
	covered atomic.Uint64 // the losses the latest successful confirmation covers; grows under mu

	mu      sync.Mutex
	running *confirmRun // the confirmation in flight, nil when none
}

// confirmRun is one confirmation: it covers the losses counted before it
// began.
type confirmRun struct {
	covers uint64
	done   chan struct{}
	err    error
}

// confirmed returns once a confirmation covers losses, the count of losses
// a caller has seen, or ctx ends (errUnconfirmedReads). One confirmation
// runs at a time, for every caller; one that began before the losses a
// caller saw does not cover them, and another follows it.
func (s *Store) confirmed(ctx context.Context, losses uint64) error {
	for {
		if s.confirm.covered.Load() >= losses {
			return nil
		}
		s.confirm.mu.Lock()
		if s.confirm.covered.Load() >= losses {
			s.confirm.mu.Unlock()
			return nil
		}
		run := s.confirm.running
		if run == nil {
			run = &confirmRun{covers: s.watch.losses.Load(), done: make(chan struct{})}
			s.confirm.running = run
			s.background.Add(1)
			go s.runConfirmation(run)
		}
		s.confirm.mu.Unlock()
		select {
		case <-run.done:
			if run.err != nil && run.covers >= losses {
				return run.err
			}
		case <-ctx.Done():
			return errUnconfirmedReads
		}
	}
}

// runConfirmation commits the confirmation's write, as a call that writes:
// its wait for the standby is never cut short, however long the standby
// takes, and the callers that wait for it give up at their deadlines.
func (s *Store) runConfirmation(run *confirmRun) {
	defer s.background.Done()
	// Only taking a session is bounded; the statement, once sent, waits.
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.QueryTimeout)
	defer cancel()
	_, err := s.db.ExecContext(writing(ctx), confirmStatement)
	if err != nil {
		run.err = s.fail("confirm", err)
	}
	s.confirm.mu.Lock()
	if err == nil && run.covers > s.confirm.covered.Load() {
		s.confirm.covered.Store(run.covers)
	}
	s.confirm.running = nil
	s.confirm.mu.Unlock()
	close(run.done)
}

// shownBatch is flush, a batcher's flush function, whose answers wait for
// a confirmation that covers every loss counted until flush returned: the
// confirmation begins after every commit flush could have read.
func shownBatch[T, R any](s *Store, flush func(context.Context, []T) []groupcommit.Result[R]) func(context.Context, []T) []groupcommit.Result[R] {
	return func(ctx context.Context, items []T) []groupcommit.Result[R] {
		ctx, cancel := context.WithTimeout(ctx, s.cfg.QueryTimeout)
		defer cancel()
		if err := s.confirmed(ctx, s.watch.losses.Load()); err != nil {
			return failAll[R](len(items), err)
		}
		out := flush(ctx, items)
		if err := s.confirmed(ctx, s.watch.losses.Load()); err != nil {
			return failAll[R](len(items), err)
		}
		return out
	}
}

// failAll is n answers, each err.
func failAll[R any](n int, err error) []groupcommit.Result[R] {
	out := make([]groupcommit.Result[R], n)
	for i := range out {
		out[i].Err = err
	}
	return out
}
