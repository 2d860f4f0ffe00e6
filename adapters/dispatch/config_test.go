package dispatch

import (
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
)

// Zero fields take the defaults, and a claim always outlasts its attempt
// twice over, so that no other replica takes an event being sent.
func TestConfigDefaults(t *testing.T) {
	got := Config{}.withDefaults()
	want := Config{Concurrency: 16, Timeout: 10 * time.Second, Lease: 20 * time.Second, Retry: application.RetryPolicy{}.WithDefaults(),
		Poll: time.Second, YieldPause: 100 * time.Millisecond}
	if got != want {
		t.Fatalf("defaults %+v; want %+v", got, want)
	}
	for _, row := range []struct{ timeout, lease, want time.Duration }{
		{time.Second, 0, 2 * time.Second},
		{time.Second, time.Second, 2 * time.Second},
		{time.Second, time.Minute, time.Minute},
	} {
		if got := (Config{Timeout: row.timeout, Lease: row.lease}).withDefaults().Lease; got != row.want {
			t.Errorf("lease %s with a %s timeout gives %s; want %s", row.lease, row.timeout, got, row.want)
		}
	}
}
