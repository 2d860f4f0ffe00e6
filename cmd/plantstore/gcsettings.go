package main

import (
	"fmt"
	"runtime"
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

// The Go runtime's soft memory limit is a share of the container's memory
// limit: the rest is for what the runtime does not count, the binary's code
// and data above all (about 21 MiB resident), and in a container with the
// embedded store SQLite's own memory, allocated outside Go's heap (15 to
// 20 MiB under load), which embeddedStoreMemory leaves out as well. Without a container
// limit the service behaves as in a 64 MiB container. Under a burst the
// collector then runs early instead of letting the heap grow to GOGC's
// target first, which in the first second of load took the process past
// 100 MiB.
const (
	memoryLimitShare    = 0.75
	fallbackMemory      = 64 << 20
	embeddedStoreMemory = 16 << 20
)

// runtimeSetting is one of the Go runtime's settings as the service runs
// with it, and what applies it when the service chooses it.
type runtimeSetting struct {
	shown
	apply func()
}

// gcPercent is the garbage collection target: GOGC from the environment,
// which the runtime has applied, else defaultGCPercent. An empty GOGC counts
// as unset. A GOGC the runtime cannot read it ignores for its own default of
// 100: that is a typo, not a choice, and it is refused.
func gcPercent(getenv func(string) (string, bool)) (runtimeSetting, error) {
	if v, _ := getenv("GOGC"); v != "" {
		if _, err := strconv.ParseInt(v, 10, 32); err != nil && v != "off" {
			return runtimeSetting{}, fmt.Errorf("GOGC=%s: must be a whole number (a percentage) or off", v)
		}
		return runtimeSetting{shown{"GOGC", v, "environment"}, func() {}}, nil
	}
	return runtimeSetting{
		shown{"GOGC", strconv.Itoa(defaultGCPercent), "default: the service's, where Go's own is 100"},
		func() { debug.SetGCPercent(defaultGCPercent) },
	}, nil
}

// memoryLimit is the soft memory limit: GOMEMLIMIT from the environment,
// which the runtime has applied, else memoryLimitShare of the container's
// memory limit (its cgroup's), less embeddedStoreMemory when the store is
// embedded (but never under half the share), or memoryLimitShare of
// fallbackMemory without a container: there no limit is there to keep, and
// the collector working harder near a lower one cost the embedded store
// 3 to 5 % of its rate. An empty GOMEMLIMIT counts as unset; one the runtime cannot read
// is refused (the runtime itself stops a process started with it).
func memoryLimit(getenv func(string) (string, bool), embedded bool) (runtimeSetting, error) {
	if v, _ := getenv("GOMEMLIMIT"); v != "" {
		if _, ok := parseByteCount(v); !ok && v != "off" {
			return runtimeSetting{}, fmt.Errorf("GOMEMLIMIT=%s: must be a number of bytes with an optional unit (B, KiB, MiB, GiB, TiB), or off", v)
		}
		return runtimeSetting{shown{"GOMEMLIMIT", v, "environment"}, func() {}}, nil
	}
	memory := uint64(fallbackMemory)
	note := "default: 3/4 of " + byteCount(fallbackMemory) + ", as no container memory limit was found"
	contained := false
	if limit, err := memlimit.FromCgroup(); err == nil {
		memory, contained = limit, true
		note = "default: 3/4 of the container's memory limit, " + byteCount(int64(min(limit, 1<<62)))
	}
	limit := int64(memoryLimitShare * float64(memory))
	if embedded && contained {
		limit = max(limit-embeddedStoreMemory, limit/2)
		note += ", less " + byteCount(embeddedStoreMemory) + " for the embedded store's own memory"
	}
	return runtimeSetting{shown{"GOMEMLIMIT", byteCount(limit), note}, func() { debug.SetMemoryLimit(limit) }}, nil
}

// maxProcs is the number of cores the service uses: GOMAXPROCS from the
// environment, else the runtime's own choice, the CPUs the process may use
// (its container's CPU limit counted). The auto settings grow with it.
func maxProcs(getenv func(string) (string, bool)) shown {
	n := runtime.GOMAXPROCS(0)
	note := "default: the runtime's, the CPUs this process may use"
	if v, _ := getenv("GOMAXPROCS"); v == strconv.Itoa(n) {
		note = "environment"
	}
	return shown{"GOMAXPROCS", strconv.Itoa(n), note}
}

// byteCount writes n as GOMEMLIMIT reads it: in MiB when it is a whole
// number of them, else in bytes.
func byteCount(n int64) string {
	if n > 0 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + "MiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// parseByteCount reads a byte count as the runtime reads GOMEMLIMIT: a
// non-negative whole number, optionally followed by B, KiB, MiB, GiB or TiB.
func parseByteCount(s string) (int64, bool) {
	units := []struct {
		suffix string
		shift  uint
	}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if len(s) > len(u.suffix) && s[len(s)-len(u.suffix):] == u.suffix {
			s, shift = s[:len(s)-len(u.suffix)], u.shift
			break
		}
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > (1<<63-1)>>shift {
		return 0, false
	}
	return n << shift, true
}
