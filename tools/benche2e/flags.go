package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// counts defines a flag holding a comma-separated list of positive integers.
func counts(fs *flag.FlagSet, p *[]int, name, usage string) {
	fs.Func(name, usage, func(list string) error {
		*p = nil
		for f := range strings.SplitSeq(list, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("%q is not a positive count", f)
			}
			*p = append(*p, n)
		}
		return nil
	})
}

// words defines a flag holding a comma-separated list of allowed words.
func words(fs *flag.FlagSet, p *[]string, name, usage string, allowed []string) {
	fs.Func(name, fmt.Sprintf("%s: %s (default all)", usage, strings.Join(allowed, ",")), func(list string) error {
		*p = strings.Split(list, ",")
		for _, w := range *p {
			if !slices.Contains(allowed, w) {
				return fmt.Errorf("%q is not one of %s", w, strings.Join(allowed, ", "))
			}
		}
		return nil
	})
}

// checkEnv accepts the variables that tune the service: its settings and the
// Go runtime's knobs.
func checkEnv(kv string) error {
	name, _, ok := strings.Cut(kv, "=")
	if !ok || !strings.HasPrefix(name, "PLANTSTORE_") && !slices.Contains([]string{"GOGC", "GOMEMLIMIT", "GOMAXPROCS"}, name) {
		return fmt.Errorf("%q: want PLANTSTORE_NAME, GOGC, GOMEMLIMIT or GOMAXPROCS=VALUE", kv)
	}
	return nil
}
