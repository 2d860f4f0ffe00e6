package main

import (
	"context"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/eventprune"
	"github.com/plantstore/plantstore/application"
)

// feedSettings are the event feed's.
type feedSettings struct {
	Retention time.Duration `flag:"event-retention" default:"168h" check:"atleast:1m" help:"how long the event feed (GET /events) keeps events, at least a minute: older ones are pruned, and an older cursor is answered 410"`
}

// feedModule keeps the event feed: its retention, for the use case that
// judges cursors by it, and the pruner that removes older events, from
// start to stop.
var feedModule = fx.Module("feed",
	fx.Provide(func(s *feedSettings) application.EventRetention { return application.EventRetention(s.Retention) }),
	fx.Invoke(runPruner),
)

// runPruner starts pruning with the service and stops it within the grace
// period: a pass cut short is done again by the next start's.
func runPruner(lc fx.Lifecycle, retention application.EventRetention, grace *gracePeriod, store application.EventPruner, log *slog.Logger) {
	p := eventprune.New(eventprune.Config{Retention: retention}, store, log)
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			p.Start()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			ctx, cancel := grace.within(ctx)
			defer cancel()
			p.Stop(ctx)
			return nil
		},
	})
}
