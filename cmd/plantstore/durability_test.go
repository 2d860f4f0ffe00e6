package main

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// A create is answered 200 only once it is committed: killing the process
// without warning, in the middle of a load, loses none of the acknowledged
// plants, and a create that got no answer can be sent again.
func TestAcknowledgedCreatesSurviveSIGKILL(t *testing.T) {
	forEachStore(t, func(t *testing.T, databaseURL string) {
		p := startProcess(t, databaseURL, heldCreates)
		report := load{
			workers:        8,
			budget:         5000,
			interruptAfter: 300,
			interrupt:      func() { p.signal(t, os.Kill) },
		}.run(t, newCreator(t, p, 8))
		if state := p.waitExit(t, 30*time.Second); !killedBy(state, syscall.SIGKILL) {
			t.Fatalf("the service ended with %v, want killed by SIGKILL", state)
		}

		again := startProcess(t, databaseURL, nil)
		c := newCreator(t, again, 8)
		checkAcknowledged(t, c, report.acked)
		checkRetries(t, c, report.unanswered)
	})
}
