package main

import (
	"slices"
	"time"
)

// sample is what one cell measured in its window.
type sample struct {
	completed int             // operations completed inside the window
	failed    int             // of which answered with an error (non-2xx for HTTP)
	window    time.Duration   // length of the measured window
	latencies []time.Duration // one per completed operation
	rss       int64           // the service's peak resident set in bytes; 0 when not measured
	cpu       cpuTimes        // CPU spent in the window
	service   serviceStats    // the service's own metrics, over its whole run
}

// rate is completed operations per second.
func (s *sample) rate() float64 {
	if s.window <= 0 {
		return 0
	}
	return float64(s.completed) / s.window.Seconds()
}

// percentile returns the latency below which the fraction q of operations
// finished (nearest rank).
func (s *sample) percentile(q float64) time.Duration {
	if len(s.latencies) == 0 {
		return 0
	}
	if !slices.IsSorted(s.latencies) {
		slices.Sort(s.latencies)
	}
	i := int(q*float64(len(s.latencies))+0.5) - 1
	return s.latencies[max(0, min(i, len(s.latencies)-1))]
}

// window is the measured interval of a cell: what completes inside counts.
type window struct{ start, end time.Time }

func (w window) contains(t time.Time) bool { return !t.Before(w.start) && t.Before(w.end) }
