package storetest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/adapters/storetest"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// memory is the simplest correct store. Running the suite against it shows
// the suite asks for nothing a correct store cannot give.
type memory struct {
	mu     sync.Mutex
	plants map[domain.ID]domain.Plant
}

func (m *memory) InsertIfAbsent(ctx context.Context, rec application.Record) (domain.Plant, bool, error) {
	if err := ctx.Err(); err != nil {
		return domain.Plant{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.plants[rec.Plant.ID()]; ok {
		return p, false, nil
	}
	m.plants[rec.Plant.ID()] = rec.Plant
	return rec.Plant, true, nil
}

// view is a second store on the same data, as Reopen asks for.
type view struct{ *memory }

func TestSuiteAcceptsACorrectStore(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open: func(*testing.T) application.PlantStore {
			return &memory{plants: map[domain.ID]domain.Plant{}}
		},
		Reopen: func(_ *testing.T, s application.PlantStore) application.PlantStore {
			return view{s.(*memory)}
		},
	})
}
