package main

import (
	"io"
	"log/slog"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
)

// newApp wires the service: the core (settings, logger, metrics registry),
// one module per adapter, and the use cases between them. extra options let
// tests observe or replace parts.
func newApp(c *config, logOut io.Writer, extra ...fx.Option) *fx.App {
	opts := []fx.Option{
		coreModule(c, logOut),
		storeModule(c),
		fx.Invoke(checkSchema),
		authModule,
		useCaseModule,
		// Started before the API so that it stops after it, before the store.
		feedModule,
		// Started before the API so that it stops after it, before the store.
		webhookModule(c),
		// Bound before the API so that it closes after it: health and
		// metrics answer while the API drains.
		adminModule,
		apiModule,
		// Last: the listeners serve once every part has started.
		fx.Invoke(func(lc fx.Lifecycle, b *bound) { lc.Append(fx.StartHook(b.serveAll)) }),
		fx.WithLogger(func(log *slog.Logger) fxevent.Logger {
			l := &fxevent.SlogLogger{Logger: log}
			// Wiring details only when debugging; a failure is reported once,
			// as one line, by the command.
			l.UseLogLevel(slog.LevelDebug)
			l.UseErrorLevel(slog.LevelDebug)
			return l
		}),
		fx.StartTimeout(c.Postgres.StartupWait + 15*time.Second),
		fx.StopTimeout(c.stopBudget() + 5*time.Second), // serve's own bound ends first
	}
	return fx.New(append(opts, extra...)...)
}
