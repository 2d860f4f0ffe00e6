package main

import (
	"fmt"
	"io"
)

// settingsCommand prints the value serve would take for every setting, one
// PLANTSTORE_NAME=value line each, from the defaults, the environment and the
// flags, with secrets masked as on the start-up line. A value serve would
// refuse is the same one-line error, so an operator (or a test of the
// deployment manifests) can check a configuration without starting anything.
func settingsCommand(args []string, getenv func(string) (string, bool), stdout io.Writer) error {
	cfg := &config{}
	s := cfg.settings()
	if err := s.Load("settings", args, getenv, stdout); err != nil {
		return err
	}
	if _, err := cfg.Webhook.enabled(); err != nil {
		return err
	}
	attrs := s.LogAttrs() // name, masked value, name, ...
	for i := 0; i+1 < len(attrs); i += 2 {
		fmt.Fprintf(stdout, "%s=%s\n", attrs[i], attrs[i+1])
	}
	return nil
}
