package memory_test

import (
	"testing"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/adapters/storetest"
	"github.com/plantstore/plantstore/application"
)

func TestContract(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open:       func(*testing.T) storetest.Store { return memory.New() },
		OpenOutbox: func(_ *testing.T, receivers []string) storetest.OutboxStore { return memory.New(receivers...) },
		OpenPayload: func(t *testing.T, p application.Payload, receivers []string, same storetest.OutboxStore) storetest.OutboxStore {
			if same != nil {
				t.Skip("a memory store shares its outbox with no other")
			}
			return memory.NewWithPayload(p, receivers...)
		},
	})
}
