package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runWebhooks runs `plantstore webhooks args...` on the store at db and
// returns what it printed.
func runWebhooks(t *testing.T, db string, args ...string) (string, error) {
	var out strings.Builder
	getenv := func(k string) (string, bool) { return db, k == "PLANTSTORE_DATABASE_URL" }
	err := webhooks(t.Context(), args, getenv, &out, io.Discard)
	return out.String(), err
}

// An event that is not delivered within its maximum age fails, is kept and
// counted; the operator lists them and redelivers them, by id or all.
func TestWebhookEventsFailAndAreRedelivered(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		file, secret := newSecretFile(t)
		answer, bringUp := downUntilUp(500, 200)
		r := newHookReceiver(t, secret, answer)
		env := webhookEnv(file, r.srv.URL)
		env["PLANTSTORE_WEBHOOK_MAX_AGE"] = "500ms"
		s := startService(t, db, env)
		s.create(t, `{"id":5,"name":"Fern"}`).expect(t, 200, "")
		s.create(t, `{"id":6,"name":"Ivy"}`).expect(t, 200, "")
		// The failure is counted when decided and in the outbox once settled.
		var out string
		require.Eventually(t, func() bool {
			var err error
			out, err = runWebhooks(t, db, "list", "--failed")
			return err == nil && strings.Count(out, "\n") == 3
		}, 15*time.Second, 50*time.Millisecond, "the events did not fail")
		if line := strings.Split(out, "\n")[1]; !strings.Contains(line, "failed") || !strings.Contains(line, "500") {
			t.Fatalf("webhooks list --failed:\n%s", out)
		}
		if !strings.Contains(s.adminGet(t, "/metrics").body, "plantstore_webhook_events_failed_total 2") {
			t.Error("the failures are not counted")
		}
		bringUp()
		// Redelivered by id beside one that is not a failed event: the failed
		// one is due again, the other is named and the command fails.
		failedID := strings.Fields(strings.Split(out, "\n")[1])[0]
		out, err := runWebhooks(t, db, "redeliver", "msg_unknown", failedID, "msg_unknown")
		if err == nil || !strings.HasSuffix(err.Error(), "left as they were: msg_unknown") || !strings.HasPrefix(out, "1 failed events are due again") {
			t.Fatalf("webhooks redeliver of a failed and an unknown id: %v %s", err, out)
		}
		// Then every failed event: the one left.
		out, err = runWebhooks(t, db, "redeliver", "--all")
		require.NoError(t, err, "webhooks redeliver --all")
		require.Equal(t, "1 failed events are due again\n", out)
		r.deliveries(t, 2, 10*time.Second)
	})
}

func TestWebhooksRedeliverSaysWhatItNeeds(t *testing.T) {
	db := "sqlite:" + t.TempDir() + "/p.db"
	for args, want := range map[string]string{
		"":              "give the ids of failed events, or --all",
		"--all msg_one": "give event ids or --all, not both",
	} {
		_, err := runWebhooks(t, db, append([]string{"redeliver"}, strings.Fields(args)...)...)
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("webhooks redeliver %s: %v; want %q", args, err, want)
		}
	}
}

// An event whose URL was taken out of the receivers is kept and listed (the
// worker never claims it: adapters/dispatch checks that on its clock); once
// the URL is configured again, it goes.
func TestEventsOfAReceiverNoLongerConfiguredWaitForIt(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		file, secret := newSecretFile(t)
		answer, bringUp := downUntilUp(500, 204)
		removed := newHookReceiver(t, secret, answer)
		kept := newHookReceiver(t, secret, nil)
		t.Run("both configured", func(t *testing.T) { // the service stops with the subtest
			s := startService(t, db, webhookEnv(file, removed.srv.URL, kept.srv.URL))
			s.create(t, `{"id":1,"name":"Fern"}`).expect(t, 200, "")
			kept.deliveries(t, 1, 10*time.Second)
			require.Eventually(t, func() bool { return removed.attemptCount() > 0 }, 10*time.Second, 20*time.Millisecond,
				"no attempt to the receiver that answers 500")
		})
		tried := removed.attemptCount()
		bringUp()
		t.Run("one taken out", func(t *testing.T) {
			s := startService(t, db, webhookEnv(file, kept.srv.URL))
			s.create(t, `{"id":2,"name":"Ivy"}`).expect(t, 200, "")
			kept.deliveries(t, 2, 10*time.Second)
			require.Equal(t, tried, removed.attemptCount(), "attempts to a receiver no longer configured")
			out, err := runWebhooks(t, db, "list")
			require.NoError(t, err)
			require.Contains(t, out, removed.srv.URL, "the waiting event is not listed")
		})
		startService(t, db, webhookEnv(file, removed.srv.URL, kept.srv.URL))
		require.Equal(t, `{"id":1,"name":"Fern"}`, removed.deliveries(t, 1, 10*time.Second)[0].body, "delivered once configured again")
	})
}
