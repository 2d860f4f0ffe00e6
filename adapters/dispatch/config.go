package dispatch

import (
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"time"

	"github.com/plantstore/plantstore/application"
)

// Config tunes the worker. Zero fields take the defaults below.
type Config struct {
	Concurrency int                     // attempts in flight at most, per receiver (16)
	Timeout     time.Duration           // bound of one attempt (10s)
	Lease       time.Duration           // claim of one attempt, at least twice Timeout (twice Timeout)
	Retry       application.RetryPolicy // back-off and maximum age (the policy's defaults)
	Poll        time.Duration           // look for due events this often without a signal (1s)
	// While at least YieldAt of the clients' requests are in flight (see
	// Deps.Clients), the worker claims at most once per YieldPause (100ms),
	// for the slots free then, so that deliveries slow to a trickle instead
	// of taking the cores the clients wait for, and an attempt that hangs
	// holds only its own slot; events wait in the outbox meanwhile and go at
	// full speed once the clients' load drops. Zero YieldAt never yields.
	YieldAt    int
	YieldPause time.Duration
}

func (c Config) withDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	def(&c.Timeout, 10*time.Second)
	def(&c.Poll, time.Second)
	def(&c.YieldPause, 100*time.Millisecond)
	c.Retry = c.Retry.WithDefaults()
	// An attempt ends, delivered or cut short, well before its claim does:
	// no other replica takes an event while it is being sent. A replica that
	// dies gives its claims back as quickly as that allows.
	c.Lease = max(c.Lease, 2*c.Timeout)
	return c
}

// Deps are what the worker works with. Source and Sender are required.
type Deps struct {
	Source application.EventSource
	Sender application.EventSender
	// Observer learns of every attempt; nil: nobody.
	Observer Observer
	// Clients is the clients' demand, to which deliveries give way; nil:
	// they never do.
	Clients Demand
	// Log takes warnings and given-up events; nil: discarded.
	Log *slog.Logger
	// Tracing, when neither nil nor a no-op, gives every attempt a span
	// linked to the create that committed its event.
	Tracing trace.TracerProvider
}

// Demand is the load clients put on the service now, to which deliveries
// give way: they share its cores.
type Demand interface {
	// InFlight is how many client requests are being served.
	InFlight() int
}

// Observer learns of every attempt, for metrics.
type Observer interface {
	// Attempted reports an attempt's outcome (application.AttemptOutcome)
	// and, when delivered, the time from the event's commit to the
	// receiver's answer.
	Attempted(outcome string, latency time.Duration)
	// GaveUp reports an event marked failed.
	GaveUp()
}

// nobody is the Observer when none is given.
type nobody struct{}

func (nobody) Attempted(string, time.Duration) {}
func (nobody) GaveUp()                         {}
