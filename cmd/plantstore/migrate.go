package main

import (
	"context"
	"io"
	"log/slog"

	"go.uber.org/fx"
)

// migrate applies the store's schema migrations and exits. It is safe to run
// again: applied migrations are skipped.
func migrate(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, _ io.Writer) error {
	cfg := &config{}
	if err := cfg.settings().Only(append(storeAccess, "log-level")...).Load("migrate", args, getenv, stdout); err != nil {
		return err
	}
	cfg.Store.Migrate = false // applied below, once, with the caller's context
	app := fx.New(
		coreModule(cfg, stdout),
		storeModule(cfg),
		fx.NopLogger,
		fx.Invoke(func(m migrator, log *slog.Logger) error {
			behind, err := m.SchemaBehind(ctx)
			if err != nil {
				return err
			}
			if err := m.Migrate(ctx); err != nil {
				return err
			}
			if behind {
				// Another replica may have applied some of them meanwhile:
				// either way the schema is now this build's.
				log.Info("schema migrated: the migrations it lacked are applied")
				return nil
			}
			log.Info("schema is up to date: no migration to apply")
			return nil
		}),
	)
	if err := app.Err(); err != nil {
		return startError(err)
	}
	return app.Stop(ctx)
}
