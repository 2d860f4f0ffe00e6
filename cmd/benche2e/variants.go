package main

import (
	"errors"
	"fmt"
	"strings"
)

// variant is one set of settings the service is measured with.
type variant struct {
	label string
	env   []string
}

func parseVariant(v string) (variant, error) {
	label, settings, _ := strings.Cut(v, ":")
	if label == "" {
		return variant{}, errors.New("a variant needs a label, as tuned:GOGC=400")
	}
	vr := variant{label: label}
	if settings == "" {
		return vr, nil
	}
	for _, kv := range strings.Split(settings, ",") {
		if err := checkEnv(kv); err != nil {
			return variant{}, err
		}
		vr.env = append(vr.env, kv)
	}
	return vr, nil
}

// checkEnv accepts the variables that tune the service: its settings and
// the Go runtime's memory knobs.
func checkEnv(kv string) error {
	name, _, ok := strings.Cut(kv, "=")
	if !ok || !(strings.HasPrefix(name, "PLANTSTORE_") || name == "GOGC" || name == "GOMEMLIMIT" || name == "GOMAXPROCS") {
		return fmt.Errorf("%q: want PLANTSTORE_NAME=VALUE, GOGC, GOMEMLIMIT or GOMAXPROCS=VALUE", kv)
	}
	return nil
}
