package dispatch

import (
	"context"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/plantstore/plantstore/application"
)

// attempt sends e once and says what to do with it, by the delivery rules.
func (w *Worker) attempt(attempts context.Context, e application.Event) application.Settlement {
	ctx, cancel := context.WithTimeout(attempts, w.cfg.Timeout)
	defer cancel()
	var span trace.Span
	if w.tracer != nil {
		ctx, span = w.startAttempt(ctx, e)
	}
	err := w.deps.Sender.Send(ctx, e)
	if span != nil {
		endAttempt(span, err)
	}
	// An attempt that a stop cut short is retried, whatever the event's
	// age: the receiver was never given its chance.
	a := application.Attempt{Err: err, At: time.Now(), CutShort: attempts.Err() != nil}
	s := w.cfg.Retry.Settle(e, a)
	var latency time.Duration
	if s.Delivered {
		latency = a.At.Sub(e.CreatedAt)
	}
	w.deps.Observer.Attempted(application.AttemptOutcome(err), latency)
	if s.Failed {
		w.deps.Observer.GaveUp()
		w.deps.Log.Error("webhook event failed: no delivery within its maximum age", "event", e.ID, "url", loggedURL(e.URL),
			"plant", int64(e.PlantID), "attempts", e.Attempts+1, "error", s.Error)
	}
	return s
}

// loggedURL is a receiver's URL as log lines show it: without its query or
// user information, where receivers often take their access token.
func loggedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery = nil, "", false
	return u.String()
}
