package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.uber.org/dig"
	"go.uber.org/fx"

	"github.com/plantstore/plantstore/adapters/tracing"
)

// serve runs the service until ctx ends, then stops it gracefully.
func serve(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) error {
	cfg, err := loadConfig("serve", args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, "\n"+tracing.Help)
	}
	if err != nil {
		return err
	}
	traces, err := tracing.FromEnv(getenv, buildVersion())
	if err != nil {
		return err
	}
	gcPercent, memLimit := setGCPercent(getenv), setMemoryLimit(getenv)
	if _, err := cfg.Webhook.enabled(); err != nil {
		return err
	}
	var dev *devSetup
	if !cfg.Auth.hasKey() {
		if !cfg.Core.Dev {
			return errors.New("no token key configured: set PLANTSTORE_JWT_SECRET_FILE, PLANTSTORE_JWT_PUBLIC_KEY_FILE or PLANTSTORE_JWKS_URL, or run `plantstore serve --dev` for development")
		}
		if dev, err = prepareDev(cfg); err != nil {
			return err
		}
	}
	logOut := newBufferedLog(stdout)
	defer logOut.Close() // after the last line, "stopped"
	var (
		log *slog.Logger
		ls  *Listeners
		d   *drain
	)
	app := newApp(cfg, logOut, tracingModule(traces), fx.Populate(&log, &ls, &d))
	if err := app.Err(); err != nil {
		return startError(err)
	}
	log.Info("starting", append([]any{"version", buildVersion(), "gogc", gcPercent, "gomemlimit", memLimit, "tracing", traces.String()}, cfg.Core.startUpLine...)...)
	if err := app.Start(ctx); err != nil {
		return startError(err)
	}
	if dev != nil {
		dev.announce(stderr, ls.API)
	}
	<-ctx.Done()
	// Readiness fails at once; the API answers on, asking every client to
	// reconnect, until load balancers have stopped sending traffic here.
	d.begin()
	log.Info("shutting down", "delay", cfg.HTTP.ShutdownDelay.String(), "grace_period", cfg.HTTP.ShutdownTimeout.String())
	time.Sleep(cfg.HTTP.ShutdownDelay)
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.HTTP.ShutdownTimeout+10e9)
	defer cancel()
	if err := app.Stop(stopCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// startError reduces fx's wrapped start-up error to its cause: one line.
func startError(err error) error {
	return dig.RootCause(err)
}
