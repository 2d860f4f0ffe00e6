package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"go.uber.org/dig"
	"go.uber.org/fx"
)

// serve runs the service until ctx ends, then stops it gracefully.
func serve(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) error {
	cfg, err := loadConfig("serve", args, getenv, stdout)
	if err != nil {
		return err
	}
	gcPercent := setGCPercent(getenv)
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
	app := newApp(cfg, logOut, fx.Populate(&log, &ls, &d))
	if err := app.Err(); err != nil {
		return startError(err)
	}
	log.Info("starting", append([]any{"version", buildVersion(), "gogc", gcPercent}, cfg.Core.startUpLine...)...)
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

// defaultGCPercent is the service's garbage collection target. Its live heap
// is a few MiB and a create allocates about 5 KiB, so Go's default of 100
// collects dozens of times a second under load; 400 spends about 12 MiB more
// memory for an eighth of the collections (docs/performance.md).
// GOMEMLIMIT, when set, still makes the collector work harder near the limit.
const defaultGCPercent = 400

// setGCPercent applies defaultGCPercent unless GOGC is set in the
// environment, which the runtime has already applied, and returns the
// percent in effect as GOGC spells it.
func setGCPercent(getenv func(string) (string, bool)) string {
	if v, ok := getenv("GOGC"); ok {
		return v
	}
	debug.SetGCPercent(defaultGCPercent)
	return strconv.Itoa(defaultGCPercent)
}

// startError reduces fx's wrapped start-up error to its cause: one line.
func startError(err error) error {
	return dig.RootCause(err)
}
