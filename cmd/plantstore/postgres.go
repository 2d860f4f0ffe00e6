package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/postgres"
	"github.com/plantstore/plantstore/application"
)

// postgresSettings are the PostgreSQL store's: its pool and its patience.
type postgresSettings struct {
	MaxOpenConns    poolSize      `flag:"db-max-open-conns" default:"auto" help:"PostgreSQL: most open connections, hence most batches of each kind at once (auto: two per core, at least 8)"`
	MaxIdleConns    poolSize      `flag:"db-max-idle-conns" default:"auto" help:"PostgreSQL: most idle connections kept in the pool (auto: as many as may be open)"`
	ConnMaxLifetime time.Duration `flag:"db-conn-max-lifetime" default:"30m" help:"PostgreSQL: connections are recycled after this long"`
	StartupWait     time.Duration `flag:"db-startup-wait" default:"30s" help:"PostgreSQL: how long start-up retries an unreachable database before giving up"`
	Pooler          pooler        `flag:"database-pooler" default:"none" help:"PostgreSQL: none, or transaction when reached through a transaction pooler such as PgBouncer (no session state: no start-up options, no prepared statements, no session locks)"`
}

// pooler is what stands between the service and PostgreSQL.
type pooler postgres.Pooler

func (p *pooler) UnmarshalText(b []byte) error {
	v, err := postgres.ParsePooler(string(b))
	if err != nil {
		return errors.New("must be none or transaction")
	}
	*p = pooler(v)
	return nil
}

// poolSize is a number of connections, or auto (zero): the store's default.
type poolSize int

func (n *poolSize) UnmarshalText(b []byte) error {
	if string(b) == "auto" {
		*n = 0
		return nil
	}
	v, err := strconv.Atoi(string(b))
	if err != nil || v <= 0 {
		return errors.New("must be auto or a positive whole number")
	}
	*n = poolSize(v)
	return nil
}

var postgresModule = fx.Module("postgres",
	fx.Provide(fx.Annotate(openPostgres, storePorts...)),
)

func openPostgres(lc fx.Lifecycle, s *storeSettings, pg *postgresSettings, w *webhookSettings, log *slog.Logger, reg prometheus.Registerer) (*postgres.Store, error) {
	c := postgres.Config{
		URL:             string(s.DatabaseURL),
		MaxOpenConns:    int(pg.MaxOpenConns),
		MaxIdleConns:    int(pg.MaxIdleConns),
		ConnMaxLifetime: pg.ConnMaxLifetime,
		QueryTimeout:    s.QueryTimeout,
		ConnectTimeout:  pg.StartupWait,
		Receivers:       w.receivers(),
		Payload:         application.Payload(w.Payload),
		Logger:          log,
		Pooler:          postgres.Pooler(pg.Pooler),
	}
	c.Batch.MaxBatch = s.BatchMaxSize
	c.Batch.MaxWait = s.BatchMaxWait
	st, err := postgres.Open(context.Background(), c)
	if errors.Is(err, postgres.ErrStartupOptionsRefused) {
		return nil, fmt.Errorf("PLANTSTORE_DATABASE_URL: %w (PLANTSTORE_DATABASE_POOLER=transaction)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("PLANTSTORE_DATABASE_URL: %w", err)
	}
	lc.Append(fx.StopHook(st.Close))
	return st, prepareStore(st, s, st.RegisterMetrics, reg)
}
