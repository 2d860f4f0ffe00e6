package main

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/sqlite"
	"github.com/plantstore/plantstore/application"
)

var sqliteModule = fx.Module("sqlite",
	fx.Provide(fx.Annotate(openSQLite, storePorts...)),
)

func openSQLite(lc fx.Lifecycle, s *storeSettings, w *webhookSettings, reg prometheus.Registerer) (*sqlite.Store, error) {
	c := sqlite.Config{Path: s.DatabaseURL.sqlitePath(), Receivers: w.receivers(), Payload: application.Payload(w.Payload)}
	c.Batch.MaxBatch = s.BatchMaxSize
	c.Batch.MaxWait = s.BatchMaxWait
	st, err := sqlite.Open(context.Background(), c)
	if err != nil {
		return nil, fmt.Errorf("PLANTSTORE_DATABASE_URL: %w", err)
	}
	lc.Append(fx.StopHook(st.Close))
	return st, prepareStore(st, s, st.RegisterMetrics, reg)
}
