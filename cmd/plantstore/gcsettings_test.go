package main

import (
	"os"
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
	// 3/4 of the container's memory limit, less 16 MiB with the embedded
	// store, or 3/4 of 64 MiB without a container.
	memory := uint64(64 << 20)
	embedded := func(share int64) int64 { return share }
	if limit, err := memlimit.FromCgroup(); err == nil {
		memory = limit
		embedded = func(share int64) int64 { return max(share-16<<20, share/2) }
	}
	share := int64(0.75 * float64(memory))
	bytes := func(n int64) string { return strconv.FormatFloat(float64(n), 'g', -1, 64) }
	for _, tt := range []struct {
		store          string
		env            map[string]string
		gogc, memlimit string
	}{
		{"sqlite", nil, "400", bytes(embedded(share))},
		{"postgres", nil, "400", bytes(share)},
		{"sqlite", map[string]string{"GOGC": "150", "GOMEMLIMIT": "100MiB"}, "150", "1.048576e+08"},
	} {
		p := startProcess(t, storeURLs()[tt.store](t), tt.env)
		_, metrics := adminGet(p.admin, "/metrics")
		for metric, want := range map[string]string{"go_gc_gogc_percent": tt.gogc, "go_gc_gomemlimit_bytes": tt.memlimit} {
			if !regexp.MustCompile(`(?m)^` + metric + ` ` + regexp.QuoteMeta(want) + `$`).MatchString(metrics) {
				t.Errorf("%s with %v: want %s %s in /metrics; got %q", tt.store, tt.env, metric, want, regexp.MustCompile(`(?m)^`+metric+` .*$`).FindString(metrics))
			}
		}
		if !strings.Contains(p.stdout.String(), `"gogc":"`+tt.gogc+`"`) {
			t.Errorf("%s with %v: the start-up line does not say gogc %s", tt.store, tt.env, tt.gogc)
		}
		p.signal(t, os.Interrupt)
		p.waitExit(t, 20*time.Second)
	}
}
