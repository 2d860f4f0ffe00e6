package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// outbox keeps the store's deliveries. It is guarded by the store's lock.
type outbox struct {
	receivers []string
	payload   application.Payload
	events    map[string]*event
	committed chan struct{}
	claims    atomic.Int64
}

// event is an outbox row.
type event struct {
	application.Event
	nextAt   time.Time
	failed   bool
	lastErr  string
	claimSeq string
}

// add writes one delivery per receiver for a stored plant (the plant
// payload).
func (o *outbox) add(rec application.Record) {
	o.announce(application.Event{PlantID: rec.Plant.ID(), Item: plantjson.AppendItem(nil, rec.Plant), CreatedAt: rec.CreatedAt, TraceParent: rec.TraceParent})
}

// addEvent writes one delivery per receiver for the event e of a write of
// the plant id (the event payload).
func (o *outbox) addEvent(e feedEvent, id domain.ID, traceParent string) {
	o.announce(application.Event{PlantID: id, Item: []byte(e.item), Type: e.typ, Number: e.number, CreatedAt: e.at, TraceParent: traceParent})
}

// announce writes e once per receiver, each with an id of its own, due at
// once.
func (o *outbox) announce(e application.Event) {
	if len(o.receivers) == 0 {
		return
	}
	e.RetryFrom = e.CreatedAt
	for _, url := range o.receivers {
		var b [12]byte
		_, _ = rand.Read(b[:])
		e.ID, e.URL = "msg_"+hex.EncodeToString(b[:]), url
		o.events[e.ID] = &event{Event: e, nextAt: e.CreatedAt}
	}
	select {
	case o.committed <- struct{}{}:
	default:
	}
}

// Receivers are the URLs the store writes events for.
func (s *Store) Receivers() []string { return slices.Clone(s.outbox.receivers) }

// ClaimDue claims at most limit of url's due events, oldest first, until
// now+lease.
func (s *Store) ClaimDue(ctx context.Context, url string, now time.Time, lease time.Duration, limit int) ([]application.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	var due []*event
	for _, e := range s.outbox.events {
		if e.URL == url && !e.failed && !e.nextAt.After(now) {
			due = append(due, e)
		}
	}
	slices.SortFunc(due, func(a, b *event) int { return a.nextAt.Compare(b.nextAt) })
	out := make([]application.Event, 0, min(limit, len(due)))
	for _, e := range due[:min(limit, len(due))] {
		e.claimSeq = strconv.FormatInt(s.outbox.claims.Add(1), 10)
		e.nextAt = now.Add(lease)
		claimed := e.Event
		claimed.Claim = e.claimSeq
		e.Attempts++
		out = append(out, claimed)
	}
	return out, nil
}

// Settle records the outcomes of attempts whose claims are still held.
func (s *Store) Settle(ctx context.Context, outcomes []application.Settlement) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx); err != nil {
		return err
	}
	for _, o := range outcomes {
		e, ok := s.outbox.events[o.ID]
		if !ok || e.claimSeq != o.Claim {
			continue
		}
		switch {
		case o.Delivered:
			delete(s.outbox.events, o.ID)
		default:
			e.claimSeq, e.nextAt, e.failed, e.lastErr = "", o.RetryAt, o.Failed, o.Error
		}
	}
	return nil
}

// Committed receives a signal after a create stored events.
func (s *Store) Committed() <-chan struct{} { return s.outbox.committed }

// ListEvents returns at most limit failed or pending events, oldest first.
func (s *Store) ListEvents(ctx context.Context, failed bool, limit int) ([]application.EventStatus, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	var out []application.EventStatus
	for _, e := range s.outbox.events {
		if e.failed == failed {
			out = append(out, application.EventStatus{Event: e.Event, Failed: e.failed, NextAt: e.nextAt, LastError: e.lastErr})
		}
	}
	slices.SortFunc(out, func(a, b application.EventStatus) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out[:min(limit, len(out))], nil
}

// Redeliver makes failed events due at now again, with a new retry window.
func (s *Store) Redeliver(ctx context.Context, now time.Time, ids []string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	n := 0
	for id, e := range s.outbox.events {
		if e.failed && (len(ids) == 0 || slices.Contains(ids, id)) {
			e.failed, e.nextAt, e.RetryFrom, e.Attempts = false, now, now, 0
			n++
		}
	}
	return n, nil
}

// OutboxStats reports the pending events, the oldest one's commit and the
// failed events.
func (s *Store) OutboxStats(ctx context.Context) (pending int, oldest time.Time, failed int, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.begin(ctx); err != nil {
		return 0, time.Time{}, 0, err
	}
	for _, e := range s.outbox.events {
		switch {
		case e.failed:
			failed++
		default:
			pending++
			if oldest.IsZero() || e.CreatedAt.Before(oldest) {
				oldest = e.CreatedAt
			}
		}
	}
	return pending, oldest, failed, nil
}
