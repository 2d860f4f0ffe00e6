package main

import (
	"runtime/debug"
	"strconv"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// defaultGCPercent is the service's garbage collection target. Its live heap
// is a few MiB and a create allocates about 5 KiB, so Go's default of 100
// collects dozens of times a second under load; 400 spends about 12 MiB more
// memory for an eighth of the collections (docs/performance.md). The soft
// memory limit below makes the collector work harder near it, so that the
// larger target never costs a peak.
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

// The Go runtime's soft memory limit is a share of the container's memory
// limit: the rest is for what the runtime does not count, the binary's code
// and data above all (about 10 MiB resident). Without a container limit the
// service behaves as in a 64 MiB container. Under a burst the collector then
// runs early instead of letting the heap grow to GOGC's target first, which
// in the first second of load took the process past 100 MiB.
const (
	memoryLimitShare = 0.75
	fallbackMemory   = 64 << 20
)

// setMemoryLimit applies the soft memory limit unless GOMEMLIMIT is set in
// the environment, which the runtime has already applied, and returns the
// limit in effect as GOMEMLIMIT spells it.
func setMemoryLimit(getenv func(string) (string, bool)) string {
	if v, ok := getenv("GOMEMLIMIT"); ok {
		return v
	}
	limit, err := memlimit.Set(
		memlimit.WithRatio(memoryLimitShare),
		memlimit.WithProvider(memlimit.ApplyFallback(memlimit.FromCgroup, memlimit.Limit(fallbackMemory))),
	)
	if err != nil {
		// The cgroup could not be read: keep to the fallback.
		limit = int64(memoryLimitShare * fallbackMemory)
		debug.SetMemoryLimit(limit)
	}
	return strconv.FormatInt(limit, 10) + "B"
}
