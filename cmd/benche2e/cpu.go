package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuTimes is where the machine's CPU went, cumulatively, at one instant.
type cpuTimes struct {
	service  time.Duration // the service process (zero when none runs)
	postgres time.Duration // every process named postgres
	client   time.Duration // the load: this program, or pgbench
	busy     time.Duration // the whole machine, every core, not idle
	steal    time.Duration // taken by the hypervisor from this virtual machine
}

// sub returns the CPU spent between earlier and t.
func (t cpuTimes) sub(earlier cpuTimes) cpuTimes {
	return cpuTimes{
		service:  t.service - earlier.service,
		postgres: t.postgres - earlier.postgres,
		client:   t.client - earlier.client,
		busy:     t.busy - earlier.busy,
		steal:    t.steal - earlier.steal,
	}
}

// readCPU reads the CPU times of the service (servicePID, or 0) and of the
// client (clientPID: 0 for this process), of the PostgreSQL server's
// processes if withPostgres, and of the whole machine. Processes that ended
// are not counted, which is why it is read while the load runs.
func readCPU(servicePID, clientPID int, withPostgres bool) cpuTimes {
	var t cpuTimes
	if servicePID > 0 {
		t.service = processCPU(strconv.Itoa(servicePID))
	}
	if clientPID > 0 {
		t.client = processCPU(strconv.Itoa(clientPID))
	} else {
		t.client = processCPU("self")
	}
	var dirs []string
	if withPostgres {
		dirs, _ = filepath.Glob("/proc/[0-9]*")
	}
	for _, dir := range dirs {
		comm, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err == nil && strings.TrimSpace(string(comm)) == "postgres" {
			t.postgres += processCPU(filepath.Base(dir))
		}
	}
	t.busy, t.steal = machineBusy()
	return t
}

// processCPU returns the user and system time of /proc/<pid>, threads
// included.
func processCPU(pid string) time.Duration {
	data, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields after it do not.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick
}

// machineBusy returns the CPU time of every core spent not idle, and the
// time the hypervisor stole.
func machineBusy() (busy, steal time.Duration) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	// cpu user nice system idle iowait irq softirq steal guest guest_nice;
	// guest time is already inside user, and steal was not ours.
	f := strings.Fields(line)
	field := func(i int) time.Duration {
		if i >= len(f) {
			return 0
		}
		n, _ := strconv.ParseInt(f[i], 10, 64)
		return time.Duration(n) * clockTick
	}
	return field(1) + field(2) + field(3) + field(6) + field(7), field(8)
}

// probeCPU reads the CPU times when the window that opens warmup from now
// starts and when it ends, and sends the difference; on ctx's end it sends
// zero times.
func probeCPU(ctx context.Context, warmup, duration time.Duration, servicePID, clientPID int, withPostgres bool) <-chan cpuTimes {
	out := make(chan cpuTimes, 1)
	go func() {
		wait := func(d time.Duration) bool {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(d):
				return true
			}
		}
		if !wait(warmup) {
			out <- cpuTimes{}
			return
		}
		start := readCPU(servicePID, clientPID, withPostgres)
		if !wait(duration) {
			out <- cpuTimes{}
			return
		}
		out <- readCPU(servicePID, clientPID, withPostgres).sub(start)
	}()
	return out
}
