package main

import (
	"math"
	"runtime"
	"testing"
	"time"
)

func TestPercentileIsTheNearestRank(t *testing.T) {
	s := &sample{}
	for i := 100; i >= 1; i-- {
		s.latencies = append(s.latencies, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond, 0: time.Millisecond} {
		if got := s.percentile(q); got != want {
			t.Errorf("percentile(%v) = %v, want %v", q, got, want)
		}
	}
	if got := (&sample{}).percentile(0.99); got != 0 {
		t.Errorf("no latencies: %v, want 0", got)
	}
}

func TestRatioIsTheMedianOfPerRoundRatios(t *testing.T) {
	rates := func(rs ...int) *cell {
		c := &cell{}
		for _, r := range rs {
			c.samples = append(c.samples, &sample{completed: r, window: time.Second})
		}
		return c
	}
	// Per round 2, 1 and 4: the median is 2, not 700/300 the quotient of the medians.
	ref, svc := rates(100, 400, 100), rates(200, 400, 400)
	if got := pairedRatio(svc, ref); got != 2 {
		t.Errorf("pairedRatio = %v, want 2", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median of an even count = %v, want 2.5", got)
	}
}

func TestProcessCPUOfThisProcess(t *testing.T) {
	before := processCPU(0)
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	if after := processCPU(0); after <= before {
		t.Errorf("CPU of this process did not grow: %v then %v", before, after)
	}
	if processCPU(-1) != 0 {
		t.Error("pid -1 has CPU time")
	}
}

// A loop that commits each row keeps the kernel's disk threads busy; that
// is part of what is measured, not other work disturbing it.
func TestNoiseLeavesOutTheKernelsWork(t *testing.T) {
	c := &cell{store: &store{kind: "sqlite"}}
	cores := time.Duration(runtime.NumCPU())
	s := &sample{window: time.Second, cpu: cpuTimes{load: 500 * time.Millisecond, kernel: cores * 100 * time.Millisecond,
		busy: 500*time.Millisecond + cores*100*time.Millisecond + cores*20*time.Millisecond, steal: cores * 30 * time.Millisecond}}
	other, stolen := noise(c, s)
	if math.Abs(other-0.02) > 1e-9 || math.Abs(stolen-0.03) > 1e-9 {
		t.Errorf("noise = %v other, %v stolen; want 0.02 and 0.03", other, stolen)
	}
}

func TestKernelThreadsAreFoundByTheirFlag(t *testing.T) {
	if _, flags := processStat(0); flags&kernelThread != 0 {
		t.Error("this process counts as a kernel thread")
	}
	if _, flags := processStat(2); flags&kernelThread == 0 {
		t.Skip("no kernel thread visible as pid 2 here (a PID namespace)")
	}
}
