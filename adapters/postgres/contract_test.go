package postgres

import (
	"testing"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/adapters/storetest"
	"github.com/plantstore/plantstore/application"
)

// TestContract runs the behaviour every store adapter shares, unchanged,
// each case on a fresh database. Every store it opens sends its statements
// through one statementRecorder, and once the suite has run, each statement
// sent is checked as PostgreSQL received it.
func TestContract(t *testing.T) {
	rec := recordStatements(t, pgtest.AdminURL())
	newStore := func(t *testing.T, tune ...func(*Config)) (*Store, string) {
		return newStore(t, append(tune, rec.route(t))...)
	}
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
	t.Run("NoStatementSentNamesAColumnByPosition", func(t *testing.T) { sentStatementsNameNoColumnByPosition(t, rec) })
}
