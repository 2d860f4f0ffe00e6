// Package dispatch is the worker that announces new plants: it claims due
// events from the store's outbox, hands each to the sender, and settles the
// attempts in batches. Delivery is at least once: an event leaves the outbox
// only after its receiver answered 2xx, so a crash between the answer and
// the settlement sends it again.
//
// The package holds the machinery (a loop per receiver with its own attempt
// slots, timers, batched settlements, giving way to the clients' load); the
// delivery rules it applies (back-off, maximum age, what an attempt means
// for its event) are application.RetryPolicy's. Time is read from the time
// package only, so that tests run the worker on testing/synctest's clock.
package dispatch
