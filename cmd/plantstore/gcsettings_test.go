package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// TestGarbageCollectionTarget shows the service's own GOGC and soft memory
// limit defaults, and that GOGC and GOMEMLIMIT in the environment win over
// them, as the runtime reports them.
func TestGarbageCollectionTarget(t *testing.T) {
	// 3/4 of the container's memory limit, or of 64 MiB without one.
	memory := uint64(64 << 20)
	if limit, err := memlimit.FromCgroup(); err == nil {
		memory = limit
	}
	byDefault := strconv.FormatFloat(float64(int64(0.75*float64(memory))), 'g', -1, 64)
	for _, tt := range []struct {
		env            map[string]string
		gogc, memlimit string
	}{
		{nil, "400", byDefault},
		{map[string]string{"GOGC": "150", "GOMEMLIMIT": "100MiB"}, "150", "1.048576e+08"},
	} {
		p := startProcess(t, "sqlite:"+filepath.Join(t.TempDir(), "plants.db"), tt.env)
		_, metrics := adminGet(p.admin, "/metrics")
		for metric, want := range map[string]string{"go_gc_gogc_percent": tt.gogc, "go_gc_gomemlimit_bytes": tt.memlimit} {
			if !regexp.MustCompile(`(?m)^` + metric + ` ` + regexp.QuoteMeta(want) + `$`).MatchString(metrics) {
				t.Errorf("with %v: want %s %s in /metrics; got %q", tt.env, metric, want, regexp.MustCompile(`(?m)^`+metric+` .*$`).FindString(metrics))
			}
		}
		if !strings.Contains(p.stdout.String(), `"gogc":"`+tt.gogc+`"`) {
			t.Errorf("with %v: the start-up line does not say gogc %s", tt.env, tt.gogc)
		}
		p.signal(t, os.Interrupt)
		p.waitExit(t, 20*time.Second)
	}
}
