package postgres

import (
	"testing"

	"github.com/plantstore/plantstore/adapters/storetest"
	"github.com/plantstore/plantstore/application"
)

// TestContract runs the behaviour every store adapter shares, unchanged,
// each case on a fresh database.
func TestContract(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) storetest.Store {
			s, _ := newStore(t)
			return s
		},
		Reopen: func(t *testing.T, s storetest.Store) storetest.Store {
			return openStore(t, s.(*Store).cfg.URL)
		},
		OpenOutbox: func(t *testing.T, receivers []string) storetest.OutboxStore {
			s, _ := newStore(t, func(c *Config) { c.Receivers = receivers })
			return s
		},
		OpenPayload: func(t *testing.T, p application.Payload, receivers []string, same storetest.OutboxStore) storetest.OutboxStore {
			if same != nil {
				s := openStore(t, same.(*Store).cfg.URL, func(c *Config) { c.Receivers, c.Payload = receivers, p })
				return s
			}
			s, _ := newStore(t, func(c *Config) { c.Receivers, c.Payload = receivers, p })
			return s
		},
	})
}
