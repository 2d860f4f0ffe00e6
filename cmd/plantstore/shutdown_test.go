package main

import (
	"maps"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shutdownGrace is the grace period the shutdown tests give the service.
const shutdownGrace = 10 * time.Second

// On SIGTERM the service stops taking connections, lets the requests it has
// accepted finish, closes the store and exits 0 within its grace period.
// During the drain no accepted request fails: every answer is the plant or a
// 503 the client may retry, and every acknowledged plant is in the store.
func TestSIGTERMDrainsAcceptedCreates(t *testing.T) {
	forEachStore(t, func(t *testing.T, databaseURL string) {
		env := map[string]string{"PLANTSTORE_SHUTDOWN_TIMEOUT": shutdownGrace.String()}
		maps.Copy(env, heldCreates)
		p := startProcess(t, databaseURL, env)
		report := load{
			workers:        8,
			budget:         5000,
			interruptAfter: 300,
			interrupt:      func() { p.signal(t, syscall.SIGTERM) },
		}.run(t, newCreator(t, p, 8))
		if report.ackedAfter == 0 {
			// Creates are held inside the service for a while, so some
			// were accepted when the signal came: they must have finished.
			t.Errorf("no create in flight at SIGTERM was answered 200")
		}
		state := p.waitExit(t, shutdownGrace)
		if code := state.ExitCode(); code != 0 {
			t.Fatalf("the service exited with %v, want status 0", state)
		}
		report.checkAnswersArrived(t, p)
		if len(report.truncated) > 0 {
			t.Errorf("creates %v were answered but their answers were cut short", report.truncated)
		}
		if !strings.Contains(p.stdout.String(), `"msg":"stopped"`) {
			t.Errorf("no \"stopped\" log line after SIGTERM")
		}
		if e := p.stderr.String(); e != "" {
			t.Errorf("a graceful stop wrote to stderr: %s", e)
		}

		again := startProcess(t, databaseURL, env)
		c := newCreator(t, again, 8)
		checkAcknowledged(t, c, report.acked)
		checkRetries(t, c, append(report.refused, report.unanswered...))
	})
}
