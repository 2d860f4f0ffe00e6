package main

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/admin"
	"github.com/plantstore/plantstore/adapters/httpapi"
	"github.com/plantstore/plantstore/adapters/webhook"
	"github.com/plantstore/plantstore/application"
)

// storeSettings are every store's: which one, whether serve migrates it,
// how writes are batched, and how long a request waits for it.
type storeSettings struct {
	DatabaseURL  databaseURL   `flag:"database-url" default:"sqlite:plantstore.db" secret:"url" help:"the store: sqlite:PATH (embedded) or postgres://... / postgresql://..."`
	Migrate      bool          `flag:"migrate" default:"true" help:"apply schema migrations when serve starts"`
	BatchMaxSize int           `flag:"batch-max-size" default:"256" check:"positive" help:"most writes (creates, changes and deletes) gathered into one statement and commit"`
	BatchMaxWait time.Duration `flag:"batch-max-wait" default:"0s" check:"nonnegative" help:"longest a write waits for others to share its commit (0: only those already queued; the next batch gathers while one commits)"`
	QueryTimeout time.Duration `flag:"db-query-timeout" default:"5s" help:"deadline of every request, counted from its headers, and of each PostgreSQL statement: a request still waiting for the store then answers 503"`
}

// databaseURL selects the store by its scheme.
type databaseURL string

func (u *databaseURL) UnmarshalText(b []byte) error {
	v := string(b)
	switch {
	case strings.HasPrefix(v, "sqlite:"):
		if strings.TrimPrefix(v, "sqlite:") == "" {
			return errors.New("sqlite: needs a file path, as sqlite:plantstore.db")
		}
	case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		if _, err := url.Parse(v); err != nil {
			return errors.New("not a valid URL")
		}
	default:
		return errors.New("must start with sqlite:, postgres:// or postgresql://")
	}
	*u = databaseURL(v)
	return nil
}

// sqlitePath is the file of a sqlite: URL, or "" for another store.
func (u databaseURL) sqlitePath() string {
	path, _ := strings.CutPrefix(string(u), "sqlite:")
	if path == string(u) {
		return ""
	}
	return path
}

// migrator applies a store's schema migrations.
type migrator interface {
	Migrate(ctx context.Context) error
	// SchemaBehind reports whether migrations are left to apply.
	SchemaBehind(ctx context.Context) (bool, error)
}

// checkSchema refuses to serve a store whose schema is behind this build
// when serve does not migrate it: every request would fail. Only serve's app
// runs it; `plantstore migrate` opens the store with migrations off too, and
// applies them itself.
func checkSchema(m migrator, s *storeSettings) error {
	if s.Migrate {
		return nil
	}
	behind, err := m.SchemaBehind(context.Background())
	if err != nil {
		return err
	}
	if behind {
		return errors.New("PLANTSTORE_MIGRATE: false, and the store's schema is behind this build: run `plantstore migrate` first, or let serve migrate")
	}
	return nil
}

// storeModule picks the store adapter from the database URL's scheme.
func storeModule(c *config) fx.Option {
	if c.Store.DatabaseURL.sqlitePath() != "" {
		return sqliteModule
	}
	return postgresModule
}

// storePorts binds a store adapter to every port it serves: the use cases'
// as one, httpapi.Store, which lists them.
var storePorts = []fx.Annotation{
	fx.As(new(httpapi.Store)),
	fx.As(new(application.EventPruner)),
	fx.As(new(application.EventSource)),
	fx.As(new(application.EventLog)),
	fx.As(new(webhook.OutboxStats)),
	fx.As(new(admin.Pinger)),
	fx.As(new(migrator)),
}

// prepareStore registers a store's metrics and, unless turned off, applies
// its migrations before the service takes traffic.
func prepareStore(m migrator, s *storeSettings, register func(prometheus.Registerer) error, reg prometheus.Registerer) error {
	if err := register(reg); err != nil {
		return err
	}
	if s.Migrate {
		return m.Migrate(context.Background())
	}
	return nil
}
