package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/webhook/webhooktest"
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
// counted; the operator lists them and redelivers them, by id or all, with
// either payload: the list names the event an envelope carries.
func TestWebhookEventsFailAndAreRedelivered(t *testing.T) {
	for payload, event := range map[string]string{"plant": " plant ", "event": " plant.created:evt_"} {
		t.Run(payload, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, db string) {
				h := newHooks(t)
				script, bringUp := webhooktest.DownUntilUp(500, 200)
				r := h.receiver(t, webhooktest.Answering(script))
				s := startService(t, db, h.env(map[string]string{"PLANTSTORE_WEBHOOK_MAX_AGE": "500ms", "PLANTSTORE_WEBHOOK_PAYLOAD": payload}, r.URL))
				s.create(t, `{"id":5,"name":"Fern"}`).expect(t, 200, "")
				s.create(t, `{"id":6,"name":"Ivy"}`).expect(t, 200, "")
				// The failure is counted when decided and in the outbox once settled.
				var out string
				require.Eventually(t, func() bool {
					var err error
					out, err = runWebhooks(t, db, "list", "--failed")
					return err == nil && strings.Count(out, "\n") == 3
				}, time.Minute, 50*time.Millisecond, "the events did not fail")
				failed := strings.Split(out, "\n")[1]
				require.True(t, strings.Contains(failed, "failed") && strings.Contains(failed, "500") && strings.Contains(failed, event),
					"webhooks list --failed:\n%s", out)
				require.Contains(t, s.adminGet(t, "/metrics").body, "plantstore_webhook_events_failed_total 2", "the failures are not counted")
				bringUp()
				// Redelivered by id beside one that is not a failed event: the failed
				// one is due again, the other is named and the command fails.
				out, err := runWebhooks(t, db, "redeliver", "msg_unknown", strings.Fields(failed)[0], "msg_unknown")
				require.True(t, err != nil && strings.HasSuffix(err.Error(), "left as they were: msg_unknown") && strings.HasPrefix(out, "1 failed events are due again"),
					"webhooks redeliver of a failed and an unknown id: %v %s", err, out)
				// Then every failed event: the one left.
				out, err = runWebhooks(t, db, "redeliver", "--all")
				require.NoError(t, err, "webhooks redeliver --all")
				require.Equal(t, "1 failed events are due again\n", out)
				r.WaitDeliveries(t, 2, 10*time.Second)
			})
		})
	}
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

// An event whose URL was taken out of the receivers is kept and listed, and
// not sent even once it is due again; once the URL is configured again, it
// goes.
func TestEventsOfAReceiverNoLongerConfiguredWaitForIt(t *testing.T) {
	forEachStore(t, func(t *testing.T, db string) {
		h := newHooks(t)
		script, bringUp := webhooktest.DownUntilUp(500, 204)
		removed, kept := h.receiver(t, webhooktest.Answering(script)), h.receiver(t)
		t.Run("both configured", func(t *testing.T) { // the service stops with the subtest
			s := startService(t, db, h.env(nil, removed.URL, kept.URL))
			s.create(t, `{"id":1,"name":"Fern"}`).expect(t, 200, "")
			kept.WaitDeliveries(t, 1, 10*time.Second)
			removed.WaitAttempts(t, 1, 10*time.Second) // answered 500
		})
		tried := removed.Attempts()
		bringUp()
		t.Run("one taken out", func(t *testing.T) {
			s := startService(t, db, h.env(nil, kept.URL))
			s.create(t, `{"id":2,"name":"Ivy"}`).expect(t, 200, "")
			kept.WaitDeliveries(t, 2, 10*time.Second)
			out, err := runWebhooks(t, db, "list")
			require.NoError(t, err)
			due := dueAt(t, out, removed.URL)
			// Once the event is due again, a commit wakes the worker for a
			// round of claims: the event's receiver is not among them.
			require.Eventually(t, func() bool { return time.Now().After(due) }, time.Minute, 20*time.Millisecond)
			s.create(t, `{"id":3,"name":"Moss"}`).expect(t, 200, "")
			kept.WaitDeliveries(t, 3, 10*time.Second)
			require.Equal(t, tried, removed.Attempts(), "attempts to a receiver no longer configured")
		})
		startService(t, db, h.env(nil, removed.URL, kept.URL))
		require.Equal(t, `{"id":1,"name":"Fern"}`, removed.WaitDeliveries(t, 1, 10*time.Second)[0].Body, "delivered once configured again")
	})
}

// dueAt reads from the output of webhooks list when the event waiting for
// url is due again.
func dueAt(t *testing.T, list, url string) time.Time {
	t.Helper()
	for line := range strings.Lines(list) {
		if f := strings.Fields(line); len(f) > 5 && f[2] == url {
			at, err := time.Parse(time.RFC3339, f[5])
			require.NoError(t, err, "the next attempt of %s", line)
			return at.Add(time.Second) // the listed time is cut to the second
		}
	}
	t.Fatalf("no event waits for %s:\n%s", url, list)
	return time.Time{}
}
