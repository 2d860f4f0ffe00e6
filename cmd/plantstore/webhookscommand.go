package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"go.uber.org/fx"

	"github.com/plantstore/plantstore/application"
)

const webhooksUsage = `Usage:
  plantstore webhooks list [--failed] [--limit N] [flags]   events waiting for delivery, or the failed ones
  plantstore webhooks redeliver (--all | ID...) [flags]     send failed events again, with a new retry window
  plantstore webhooks listen [--dev] [--addr A] [--secret-file F]
                                                            a receiver for development: prints verified events

list and redeliver take serve's settings of the store (PLANTSTORE_DATABASE_URL and how to reach it).
`

// webhooks is the operator's view of the outbox of webhook events, and a
// receiver for development.
func webhooks(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, webhooksUsage)
		return errors.New("webhooks: which one: list, redeliver or listen")
	}
	switch args[0] {
	case "list":
		var failed bool
		var limit int
		return withEventLog(ctx, "webhooks list", args[1:], getenv, stdout, func(fs *flag.FlagSet) {
			fs.BoolVar(&failed, "failed", false, "list the failed events instead of those waiting")
			fs.IntVar(&limit, "limit", 100, "most events listed, oldest first")
		}, func(log application.EventLog, ids []string) error {
			if len(ids) > 0 {
				return fmt.Errorf("webhooks list: unexpected argument %q", ids[0])
			}
			events, err := log.ListEvents(ctx, failed, limit)
			if err != nil {
				return err
			}
			printEvents(stdout, events)
			return nil
		})
	case "redeliver":
		var all bool
		return withEventLog(ctx, "webhooks redeliver", args[1:], getenv, stdout, func(fs *flag.FlagSet) {
			fs.BoolVar(&all, "all", false, "redeliver every failed event")
		}, func(log application.EventLog, ids []string) error {
			switch {
			case all && len(ids) > 0:
				return errors.New("webhooks redeliver: give event ids or --all, not both")
			case !all && len(ids) == 0:
				return errors.New("webhooks redeliver: give the ids of failed events, or --all")
			}
			return redeliver(ctx, log, ids, stdout)
		})
	case "listen":
		return listen(ctx, args[1:], getenv, stdout, stderr)
	case "--help", "-help", "-h", "help":
		fmt.Fprint(stdout, webhooksUsage)
		return nil
	}
	fmt.Fprint(stderr, webhooksUsage)
	return fmt.Errorf("webhooks: unknown command %q", args[0])
}

// withEventLog loads the settings with the command's own flags, opens the
// store, and runs do with its outbox and the arguments after the flags.
func withEventLog(ctx context.Context, command string, args []string, getenv func(string) (string, bool), stdout io.Writer,
	own func(*flag.FlagSet), do func(application.EventLog, []string) error) error {
	c := &config{}
	rest, err := c.settings().Only(storeAccess...).Parse(command, args, getenv, stdout, own)
	if err != nil {
		return err
	}
	c.Store.Migrate = false
	var runErr error
	app := fx.New(
		coreModule(c, io.Discard),
		storeModule(c),
		fx.NopLogger,
		fx.Invoke(func(log application.EventLog) { runErr = do(log, rest) }),
	)
	if err := app.Err(); err != nil {
		return startError(err)
	}
	return errors.Join(runErr, app.Stop(ctx))
}

// printEvents writes one line per event. EVENT is the event of the feed
// that an envelope carries (its type and id), "plant" for a new plant's
// delivery of the plant payload.
func printEvents(w io.Writer, events []application.EventStatus) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPLANT\tURL\tCREATED\tATTEMPTS\tNEXT\tEVENT\tLAST ERROR")
	for _, e := range events {
		next := e.NextAt.UTC().Format(time.RFC3339)
		if e.Failed {
			next = "failed"
		}
		event := "plant"
		if e.Type != "" {
			event = fmt.Sprintf("%s:evt_%d", e.Type, e.Number)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\t%s\t%s\n", e.ID, e.PlantID, e.URL, e.CreatedAt.UTC().Format(time.RFC3339),
			e.Attempts, next, event, e.LastError)
	}
	_ = tw.Flush()
}

// redeliver makes failed events due again: those of ids, or every one when
// ids is empty. Given ids are redelivered one at a time, so that those that
// are not failed events can be named.
func redeliver(ctx context.Context, log application.EventLog, ids []string, stdout io.Writer) error {
	if len(ids) == 0 {
		n, err := log.Redeliver(ctx, time.Now(), nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d failed events are due again\n", n)
		return nil
	}
	var due int
	var left []string
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		n, err := log.Redeliver(ctx, time.Now(), []string{id})
		if err != nil {
			fmt.Fprintf(stdout, "%d failed events are due again\n", due)
			return err
		}
		if due += n; n == 0 {
			left = append(left, id)
		}
	}
	fmt.Fprintf(stdout, "%d failed events are due again\n", due)
	if len(left) > 0 {
		return fmt.Errorf("webhooks redeliver: not failed events (unknown, pending or delivered), left as they were: %s", strings.Join(left, ", "))
	}
	return nil
}
