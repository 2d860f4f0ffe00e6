package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sample is what one cell measured in its window.
type sample struct {
	completed int                       // operations that ended inside the window
	failed    int                       // of which non-2xx (HTTP), errors or no row changed
	window    time.Duration             // length of the measured window
	latencies []time.Duration           // one per completed operation that has one
	quantiles map[float64]time.Duration // or only some quantiles (wrk's)
	rss       int64                     // the service's peak resident set in bytes; 0 when none ran
	cpu       cpuTimes                  // CPU spent in the window
	began     time.Time                 // when the window opened (service cells)
	bytes     int64                     // answers' bytes read in the window, headers included (wrk's cells)

	// The webhook's cells: plants the receiver first got in the window;
	// for lag, the acknowledged plants never announced and the highest
	// pending gauge read.
	delivered, unannounced, pending int
}

// window is the measured interval of a cell: what ends inside counts.
type window struct{ start, end time.Time }

func (w window) contains(t time.Time) bool { return !t.Before(w.start) && t.Before(w.end) }

// newSample returns an empty sample and its window of length d, which opens
// a warm-up from now.
func (b *bench) newSample(d time.Duration) (*sample, window) {
	start := time.Now().Add(b.o.warmup)
	return &sample{window: d, began: start, latencies: make([]time.Duration, 0, 1<<16)}, window{start, start.Add(d)}
}

// rate is completed operations per second.
func (s *sample) rate() float64 { return float64(s.completed) / s.window.Seconds() }

// percentile returns the latency below which the fraction q of operations
// finished (nearest rank).
func (s *sample) percentile(q float64) time.Duration {
	if len(s.latencies) == 0 {
		return s.quantiles[q]
	}
	if !slices.IsSorted(s.latencies) {
		slices.Sort(s.latencies)
	}
	i := int(q*float64(len(s.latencies))+0.5) - 1
	return s.latencies[max(0, min(i, len(s.latencies)-1))]
}

// cpuTimes is where the machine's CPU went, cumulatively, at one instant.
type cpuTimes struct {
	service  time.Duration // the service process (zero when none runs)
	postgres time.Duration // every process named postgres, and PgBouncer: the database's side
	load     time.Duration // the load: this program, or pgbench
	receiver time.Duration // this program as the webhook's receiver, when the load is another
	kernel   time.Duration // kernel threads and interrupts: disk and network work, mostly for the above
	busy     time.Duration // the whole machine, every core, not idle
	steal    time.Duration // taken by the hypervisor from this virtual machine
	wal      int64         // PostgreSQL's WAL written, in bytes: what commits wait to flush (0 when not read)
}

func (t cpuTimes) sub(u cpuTimes) cpuTimes {
	return cpuTimes{t.service - u.service, t.postgres - u.postgres, t.load - u.load, t.receiver - u.receiver,
		t.kernel - u.kernel, t.busy - u.busy, t.steal - u.steal, t.wal - u.wal}
}

// kernelThread is PF_KTHREAD among the flags of /proc/PID/stat.
const kernelThread = 0x00200000

// clockTick is the unit of /proc CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// readCPU reads the CPU times of the service (pid, or -1), of the load
// (loadPID, 0 for this process, or -1), of the receiver (receiverPID, 0
// or -1), of every postgres and pgbouncer process and of the whole machine. Processes
// that ended are not counted, which is why it is read while the load runs.
func readCPU(servicePID, loadPID, receiverPID int) cpuTimes {
	t := cpuTimes{service: processCPU(servicePID), load: processCPU(loadPID), receiver: processCPU(receiverPID)}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(dir))
		if comm, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil && (string(comm) == "postgres\n" || string(comm) == "pgbouncer\n") {
			t.postgres += processCPU(pid)
		} else if cpu, flags := processStat(pid); flags&kernelThread != 0 {
			t.kernel += cpu
		}
	}
	// cpu user nice system idle iowait irq softirq steal: guest time is
	// inside user already, and steal was not ours.
	data, _ := os.ReadFile("/proc/stat")
	line, _, _ := strings.Cut(string(data), "\n")
	f := ticks(strings.Fields(line), 1, 8)
	t.busy, t.steal = f[0]+f[1]+f[2]+f[5]+f[6], f[7]
	t.kernel += f[5] + f[6]
	return t
}

// processCPU returns the user and system time of a process, threads
// included; pid 0 is this process, -1 none.
func processCPU(pid int) time.Duration {
	cpu, _ := processStat(pid)
	return cpu
}

// processStat returns the user and system time of a process and its flags.
func processStat(pid int) (time.Duration, uint64) {
	name := "self"
	if pid < 0 {
		return 0, 0
	} else if pid > 0 {
		name = strconv.Itoa(pid)
	}
	data, err := os.ReadFile(filepath.Join("/proc", name, "stat"))
	if err != nil {
		return 0, 0
	}
	// The command name may hold spaces; the fields after it do not.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	f := ticks(fields, 11, 2)
	var flags uint64
	if len(fields) > 6 {
		flags, _ = strconv.ParseUint(fields[6], 10, 64)
	}
	return f[0] + f[1], flags
}

// ticks converts n fields from i on into durations; missing ones are zero.
func ticks(fields []string, i, n int) []time.Duration {
	out := make([]time.Duration, n)
	for j := range out {
		if i+j < len(fields) {
			v, _ := strconv.ParseInt(fields[i+j], 10, 64)
			out[j] = time.Duration(v) * clockTick
		}
	}
	return out
}

// probeCPU reads the CPU times, and the WAL position of st when it is a
// PostgreSQL store, when the window that opens warmup from now starts and
// when it ends, and sends the difference; zero if ctx ends first.
func probeCPU(ctx context.Context, st *store, warmup, duration time.Duration, servicePID, loadPID, receiverPID int) <-chan cpuTimes {
	out := make(chan cpuTimes, 1)
	go func() {
		var start cpuTimes
		for i, d := range []time.Duration{warmup, duration} {
			select {
			case <-ctx.Done():
				out <- cpuTimes{}
				return
			case <-time.After(d):
			}
			if i == 0 {
				start = readCPU(servicePID, loadPID, receiverPID)
				start.wal = st.walPosition(ctx)
			}
		}
		end := readCPU(servicePID, loadPID, receiverPID)
		if end.wal = st.walPosition(ctx); end.wal == 0 || start.wal == 0 {
			end.wal, start.wal = 0, 0
		}
		out <- end.sub(start)
	}()
	return out
}
