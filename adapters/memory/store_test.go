package memory_test

import (
	"testing"

	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/adapters/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open:       func(*testing.T) storetest.Store { return memory.New() },
		OpenOutbox: func(_ *testing.T, receivers []string) storetest.OutboxStore { return memory.New(receivers...) },
	})
}
