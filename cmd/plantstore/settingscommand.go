package main

import (
	"fmt"
	"io"
)

// settingsCommand prints every value serve would use, one NAME=value line
// each with a note on where it came from: the PLANTSTORE_* settings from
// their defaults, the environment and the flags, auto values as what they
// come to, then the Go runtime's and the OTEL_* variables, secrets masked.
// It runs serve's own checks (prepare), so a configuration serve would
// refuse is the same one-line error and exit status: an operator, or a test
// of the deployment manifests, can check a configuration before a rollout
// without starting anything.
func settingsCommand(args []string, getenv func(string) (string, bool), stdout io.Writer) error {
	st, err := prepare("settings", args, getenv, stdout)
	if err != nil {
		return err
	}
	for _, v := range st.values {
		fmt.Fprintf(stdout, "%s=%s  # %s\n", v.name, v.value, v.note)
	}
	return nil
}
