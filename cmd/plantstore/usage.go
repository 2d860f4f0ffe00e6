package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/plantstore/plantstore/cmd/plantstore/internal/settings"
)

// commandUsage writes the help of a command whose flags are its own rather
// than serve's settings, in the format of serve's help: a usage line, what
// the command does, then each flag with its variable, where it has one
// (variables maps a flag to it), and its default.
func commandUsage(w io.Writer, command, about string, fs *flag.FlagSet, variables map[string]string) {
	fmt.Fprintf(w, "Usage: plantstore %s [flags]\n\n%s\n\n", command, about)
	if len(variables) > 0 {
		fmt.Fprint(w, "A flag shown with a variable can also be set by it; a flag wins.\n\n")
	}
	fs.VisitAll(func(f *flag.Flag) {
		settings.WriteFlag(w, f.Name, variables[f.Name], f.DefValue, f.Usage)
	})
}

// fromVariables sets every flag of variables that the command line did not
// give from its variable, when that is set and not empty.
func fromVariables(fs *flag.FlagSet, variables map[string]string, getenv func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env, ok := variables[f.Name]
		if v, _ := getenv(env); ok && v != "" && !given[f.Name] && err == nil {
			if setErr := fs.Set(f.Name, v); setErr != nil {
				err = fmt.Errorf("%s=%q: %w", env, v, setErr)
			}
		}
	})
	return err
}
