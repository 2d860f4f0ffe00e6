package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/postgres"
)

// postgresSettings are the PostgreSQL store's: its pool and its patience.
type postgresSettings struct {
	MaxOpenConns    int           `flag:"db-max-open-conns" default:"8" check:"positive" help:"PostgreSQL: maximum open connections in the pool"`
	MaxIdleConns    int           `flag:"db-max-idle-conns" default:"8" check:"positive" help:"PostgreSQL: maximum idle connections kept in the pool"`
	ConnMaxLifetime time.Duration `flag:"db-conn-max-lifetime" default:"30m" help:"PostgreSQL: connections are recycled after this long"`
	QueryTimeout    time.Duration `flag:"db-query-timeout" default:"5s" help:"longest a store statement may take before the request answers 503"`
	StartupWait     time.Duration `flag:"db-startup-wait" default:"30s" help:"PostgreSQL: how long start-up retries an unreachable database before giving up"`
}

var postgresModule = fx.Module("postgres",
	fx.Provide(fx.Annotate(openPostgres, storePorts...)),
)

func openPostgres(lc fx.Lifecycle, s *storeSettings, pg *postgresSettings, w *webhookSettings, log *slog.Logger, reg prometheus.Registerer) (*postgres.Store, error) {
	c := postgres.Config{
		URL:             string(s.DatabaseURL),
		MaxOpenConns:    pg.MaxOpenConns,
		MaxIdleConns:    pg.MaxIdleConns,
		ConnMaxLifetime: pg.ConnMaxLifetime,
		QueryTimeout:    pg.QueryTimeout,
		ConnectTimeout:  pg.StartupWait,
		Receivers:       w.receivers(),
		Logger:          log,
	}
	c.Batch.MaxBatch = s.BatchMaxSize
	c.Batch.MaxWait = s.BatchMaxWait
	st, err := postgres.Open(context.Background(), c)
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(st.Close))
	return st, prepareStore(st, s, st.RegisterMetrics, reg)
}
