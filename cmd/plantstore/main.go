// Command plantstore runs the Plant Store service (serve), applies its schema
// (migrate) and mints development tokens (token).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

const usage = `plantstore: the Plant Store service.

Usage:
  plantstore serve [flags]     run the service (see serve --help for every setting)
  plantstore migrate [flags]   apply the schema migrations and exit
  plantstore settings [flags]  check a configuration as serve does; print every value serve would use
  plantstore token [flags]     mint a signed HS256 token for development and tests
  plantstore webhooks ...      list and redeliver webhook events; a receiver for development
  plantstore --version         print the version
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit status. The service
// stops when ctx ends (SIGINT or SIGTERM).
func run(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		err = migrate(ctx, args[1:], getenv, stdout, stderr)
	case "settings":
		err = settingsCommand(args[1:], getenv, stdout)
	case "token":
		err = token(args[1:], getenv, stdout, stderr)
	case "webhooks":
		err = webhooks(ctx, args[1:], getenv, stdout, stderr)
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, "plantstore", buildVersion())
		return 0
	case "--help", "-help", "-h", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "plantstore: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	default:
		fmt.Fprintln(stderr, "plantstore:", err)
		return 1
	}
}

// buildVersion is the version stamped at build time, else the module's.
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// parseFlags parses a command's own flags: --help prints the usage on
// stdout, as every command's does, and a bad flag is returned as one line,
// printed by run.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
	}
	return err
}
