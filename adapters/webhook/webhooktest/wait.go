package webhooktest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tick is how often the waits look again: often enough that a test goes on
// soon after what it waits for happened, seldom enough to cost nothing.
const tick = 20 * time.Millisecond

// WaitDeliveries waits at most within until n deliveries arrived, and
// returns every delivery so far.
func (r *Receiver) WaitDeliveries(t testing.TB, n int, within time.Duration) []Delivery {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.Deliveries()) >= n }, within, tick, "want %d deliveries", n)
	return r.Deliveries()
}

// WaitPlants waits at most within until every plant in ids was delivered
// at least once, and returns how many deliveries repeated an event.
func (r *Receiver) WaitPlants(t testing.TB, ids []int64, within time.Duration) (repeated int) {
	t.Helper()
	require.Eventually(t, func() bool {
		got, _ := r.PerPlant()
		for _, id := range ids {
			if got[id] == 0 {
				return false
			}
		}
		return true
	}, within, tick, "%d acknowledged plants, not all of them announced", len(ids))
	_, repeated = r.PerPlant()
	return repeated
}

// WaitAttempts waits at most within until at least n attempts were answered.
func (r *Receiver) WaitAttempts(t testing.TB, n int, within time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return r.Attempts() >= n }, within, tick, "want %d attempts", n)
}

// WaitHeld waits at most within until the number of held attempts
// satisfies ok; what says what the test waits for.
func (r *Receiver) WaitHeld(t testing.TB, ok func(held int) bool, within time.Duration, what string) {
	t.Helper()
	require.Eventually(t, func() bool { return ok(r.Held()) }, within, tick, what)
}
