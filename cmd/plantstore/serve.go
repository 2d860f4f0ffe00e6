package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.uber.org/dig"
	"go.uber.org/fx"
)

// serve runs the service until ctx ends, then stops it gracefully. Its
// configuration is checked by prepare, as `plantstore settings` checks it,
// before anything is opened.
func serve(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) error {
	st, err := prepare("serve", args, getenv, stdout)
	if err != nil {
		return err
	}
	cfg := st.cfg
	st.gc.apply()
	st.memory.apply()
	var dev *devSetup
	if st.dev {
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
	app := newApp(cfg, logOut, tracingModule(st.traces), fx.Populate(&log, &ls, &d))
	if err := app.Err(); err != nil {
		return startError(err)
	}
	log.Info("starting", st.startUpLine()...)
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
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.stopBudget())
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

// stopBudget is the longest a stop may take before it counts as failed:
// the grace period, then what the store may still take. A write batch in
// flight when the grace period ends holds the store's close for up to
// its query timeout when the store stalls, and the webhook outcomes cut
// short are written for up to a second; ten seconds at least.
func (c *config) stopBudget() time.Duration {
	return c.HTTP.ShutdownTimeout + max(10*time.Second, c.Store.QueryTimeout+5*time.Second)
}
