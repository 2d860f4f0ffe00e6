// Package memory is a store adapter that keeps plants in a map. It passes the
// same store suite as the durable stores, so tests of the application and
// HTTP layers use it instead of hand-written fakes; it keeps nothing across
// restarts, so the service itself never runs on it.
package memory

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/adapters/internal/traceparent"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// Store keeps plants in memory. It is safe for concurrent use; every call
// takes effect at once, in the order calls take its lock.
type Store struct {
	mu     sync.RWMutex
	plants map[domain.ID]application.Record
	fault  func(ctx context.Context) error
	outbox outbox
	feed   feed
}

// New returns an empty store. Every plant a create stores is announced to
// each of receivers, through the store's outbox (the plant payload).
func New(receivers ...string) *Store { return NewWithPayload(application.PlantPayload, receivers...) }

// NewWithPayload returns an empty store that announces to each of receivers
// what payload says: every stored plant (PlantPayload), or the event of
// every write (EventPayload).
func NewWithPayload(payload application.Payload, receivers ...string) *Store {
	return &Store{
		plants: make(map[domain.ID]application.Record),
		outbox: outbox{receivers: receivers, payload: payload, events: map[string]*event{}, committed: make(chan struct{}, 1)},
	}
}

// wrote keeps the event of a write of p, and announces it with the event
// payload.
func (s *Store) wrote(typ application.EventType, p domain.Plant, traceParent string) {
	e := s.feed.add(typ, p)
	if s.outbox.payload == application.EventPayload {
		s.outbox.addEvent(e, p.ID(), traceParent)
	}
}

// Inject makes every later call run fault first and fail with its error
// when that is not nil; a fault may also panic. Tests use it to show how the
// service answers a failing store. Inject(nil) removes it.
func (s *Store) Inject(fault func() error) {
	if fault == nil {
		s.InjectContext(nil)
		return
	}
	s.InjectContext(func(context.Context) error { return fault() })
}

// InjectContext is Inject with a fault that receives the call's context:
// one that waits, say, for its caller to give up.
func (s *Store) InjectContext(fault func(ctx context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = fault
}

// Record returns what is stored under id, creator and time included, for
// tests that check what a use case recorded.
func (s *Store) Record(id domain.ID) (application.Record, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.plants[id]
	return rec, ok
}

// begin checks the context and the injected fault before a call does its work.
func (s *Store) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.fault != nil {
		return s.fault(ctx)
	}
	return nil
}

// InsertIfAbsent stores rec unless a plant with its id exists, and returns
// the plant stored under that id and whether this call stored it.
func (s *Store) InsertIfAbsent(ctx context.Context, rec application.Record) (domain.Plant, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx); err != nil {
		return domain.Plant{}, false, err
	}
	if stored, ok := s.plants[rec.Plant.ID()]; ok {
		return stored.Plant, false, nil
	}
	rec = traceparent.Keep(ctx, rec)
	s.plants[rec.Plant.ID()] = rec
	if s.outbox.payload != application.EventPayload {
		s.outbox.add(rec)
	}
	s.wrote(application.PlantCreated, rec.Plant, rec.TraceParent)
	return rec.Plant, true, nil
}

// Ping answers readiness probes: the store is always ready, unless a fault
// is injected.
func (s *Store) Ping(ctx context.Context) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.begin(ctx)
}

// DeletePlant removes the plant stored under id and reports whether there
// was one.
func (s *Store) DeletePlant(ctx context.Context, id domain.ID) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx); err != nil {
		return false, err
	}
	rec, ok := s.plants[id]
	if ok {
		delete(s.plants, id)
		s.wrote(application.PlantDeleted, rec.Plant, traceparent.From(ctx))
	}
	return ok, nil
}

// UpdatePlant stores update's answer for the plant stored under id.
func (s *Store) UpdatePlant(ctx context.Context, id domain.ID, update application.Update) (domain.Plant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx); err != nil {
		return domain.Plant{}, err
	}
	rec, ok := s.plants[id]
	if !ok {
		return domain.Plant{}, &domain.NotFoundError{ID: id}
	}
	next, changed, err := update.On(rec.Plant)
	if err != nil {
		return domain.Plant{}, err
	}
	if changed {
		rec.Plant = next
		s.plants[id] = rec
		s.wrote(application.PlantChanged, next, traceparent.From(ctx))
	}
	return next, nil
}

// DeletePlantIf removes the plant stored under id when check allows it.
func (s *Store) DeletePlantIf(ctx context.Context, id domain.ID, check application.Check) (domain.Plant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx); err != nil {
		return domain.Plant{}, err
	}
	rec, ok := s.plants[id]
	if !ok {
		return domain.Plant{}, &domain.NotFoundError{ID: id}
	}
	if err := check(rec.Plant); err != nil {
		return domain.Plant{}, err
	}
	delete(s.plants, id)
	s.wrote(application.PlantDeleted, rec.Plant, traceparent.From(ctx))
	return rec.Plant, nil
}

// ListPlants returns the page of the first q.Limit plants that match q, in
// ascending id order, rendered as the API writes it.
func (s *Store) ListPlants(ctx context.Context, q application.ListQuery) (application.Page, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.begin(ctx); err != nil {
		return application.Page{}, err
	}
	from, ok := q.From()
	if !ok {
		return application.EmptyPage(), nil
	}
	var plants []domain.Plant
	for id, rec := range s.plants {
		if id >= from && (!q.Tag.IsSet() || rec.Plant.Tag() == q.Tag) {
			plants = append(plants, rec.Plant)
		}
	}
	slices.SortFunc(plants, func(a, b domain.Plant) int { return cmp.Compare(a.ID(), b.ID()) })
	page := application.Page{More: len(plants) > q.Limit}
	plants = plants[:min(len(plants), q.Limit)]
	page.JSON, page.Count = plantjson.AppendList(nil, plants), len(plants)
	if page.Count > 0 {
		page.Last = plants[page.Count-1].ID()
	}
	return page, nil
}

// FindPlant returns the plant stored under id and true, or false when none is.
func (s *Store) FindPlant(ctx context.Context, id domain.ID) (domain.Plant, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.begin(ctx); err != nil {
		return domain.Plant{}, false, err
	}
	rec, ok := s.plants[id]
	return rec.Plant, ok, nil
}
