package main

import (
	"maps"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A create is answered 200 only once it is committed, however the process
// stops in the middle of a load, and a create refused (503 50301) or left
// unanswered can simply be sent again: it is then stored, once.
//   - SIGTERM: the service stops taking connections, lets the requests it has
//     accepted finish, closes the store and exits 0 within its grace period.
//     No accepted request fails: every answer arrives whole, as the service
//     logged it, and some creates in flight at the signal are answered 200.
//   - SIGKILL, without warning: none of the acknowledged plants is lost.
func TestAcknowledgedCreatesSurviveSIGTERMAndSIGKILL(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGKILL: "SIGKILL"}[sig], func(t *testing.T) {
			forEachStore(t, func(t *testing.T, databaseURL string) { interruptLoad(t, databaseURL, sig) })
		})
	}
}

// interruptLoad sends sig to a service on databaseURL under a load of
// creates, checks how it ended, and then checks every create on a service
// started again on the same database.
func interruptLoad(t *testing.T, databaseURL string, sig syscall.Signal) {
	env := map[string]string{"PLANTSTORE_SHUTDOWN_TIMEOUT": shutdownGrace.String()}
	maps.Copy(env, heldCreates)
	p := startProcess(t, databaseURL, env)
	report := runLoad(t, newCreator(t, p, 8), func() { p.signal(t, sig) })
	state := p.waitExit(t, shutdownGrace)
	if sig == syscall.SIGKILL {
		if !killedBy(state, syscall.SIGKILL) {
			t.Fatalf("the service ended with %v, want killed by SIGKILL", state)
		}
	} else {
		if code := state.ExitCode(); code != 0 {
			t.Fatalf("the service exited with %v, want status 0", state)
		}
		if report.ackedAfter == 0 {
			// Creates are held inside the service for a while, so some
			// were accepted when the signal came: they must have finished.
			t.Errorf("no create in flight at SIGTERM was answered 200")
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
	}

	c := newCreator(t, startProcess(t, databaseURL, env), 8)
	checkAcknowledged(t, c, report.acked)
	checkRetries(t, c, append(report.refused, report.unanswered...))
}

// shutdownGrace is the grace period the shutdown tests give the service.
const shutdownGrace = 10 * time.Second
