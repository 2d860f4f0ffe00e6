package groupcommit

import (
	"sync"
	"time"
)

// limit decides how many batches may flush at once, by measuring what
// changing it does. It starts at one. While flushes end with items still
// waiting (callers are held up by the flushes, not the other way round), it
// compares the items flushed per second under its current setting with
// those under a neighbouring one, and keeps whichever flushes more: one
// build finds a few big batches on a small machine, where the store's CPU
// bounds the rate and splitting batches only adds work, and many batches in
// flight on a large one, where commits mostly wait on the disk and overlap
// for free. A move that pays is followed by a bigger one in the same
// direction; one that does not is undone.
//
// One window's rate is noisy, and it drifts while a load or a store warms
// up: a move can look better by chance, or only because the rate was
// rising anyway, and the setting then climbs to where batches are small and
// each costs the store more. So a move is kept only when its window beats
// the old setting's windows on both sides of it (the old one measured once
// more after the trial), by 5 % for more batches in flight and at all for
// fewer, and a setting whose neighbours keep failing is probed less and
// less often, since every probe is a window spent at a worse setting.
type limit struct {
	mu      sync.Mutex
	changed sync.Cond
	max     int
	current int
	active  int // writers holding a permit
	closed  bool

	// The window measuring the current setting.
	since          time.Time
	items, flushes int
	held           int // flushes that ended with items waiting

	// A probe of the setting trying (0 when none) from the setting from:
	// the rate of from's window before it, and the rate the trial's window
	// had, once measured (then from is measured again).
	before, tried float64
	from, trying  int
	step, sign    int // the size and direction of the next move
	calm          int // windows to wait before the next probe
	patience      int // calm after the next failed probe
	now           func() time.Time
}

// window bounds one measurement: at least this long and this many flushes.
const (
	windowTime    = 50 * time.Millisecond
	windowFlushes = 8
	// better is the gain a move to more batches in flight must show to be
	// kept, above the noise (see gain).
	better = 1.05
	// minCalm and maxCalm bound the windows between a failed probe and the
	// next one: the wait doubles with every failure in a row.
	minCalm, maxCalm = 4, 32
)

func newLimit(max int) *limit {
	l := &limit{max: max, current: 1, step: 1, sign: 1, patience: minCalm, now: time.Now}
	l.since = l.now()
	l.changed.L = &l.mu
	return l
}

// acquire waits for a permit to flush. After close every writer gets one,
// so that the queue drains.
func (l *limit) acquire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.active >= l.current && !l.closed {
		l.changed.Wait()
	}
	l.active++
}

// release returns a permit after a flush of size items, noting whether
// items were still waiting when it ended.
func (l *limit) release(size int, waiting bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.active--
	defer l.changed.Broadcast()
	if size == 0 || l.max == 1 {
		return
	}
	l.items += size
	l.flushes++
	if waiting {
		l.held++
	}
	elapsed := l.now().Sub(l.since)
	if elapsed < windowTime || l.flushes < windowFlushes {
		return
	}
	rate, busy := float64(l.items)/elapsed.Seconds(), 2*l.held >= l.flushes
	l.since, l.items, l.flushes, l.held = l.now(), 0, 0, 0
	switch {
	case l.trying != 0 && l.tried == 0:
		// The trial's window: if it beat the window before it, measure the
		// old setting once more.
		if rate < l.gain()*l.before {
			l.fail()
			break
		}
		l.tried, l.current = rate, l.from
	case l.trying != 0:
		// The old setting's window after the trial: the move is kept only
		// if the trial beat this one too; then go on, further.
		if l.tried < l.gain()*rate {
			l.fail()
			break
		}
		l.current, l.before, l.patience = l.trying, l.tried, minCalm
		l.trying, l.tried = 0, 0
		l.step *= 2
		l.probe()
	case busy && l.calm > 0:
		l.calm--
	case busy:
		l.before = rate
		l.probe()
	}
}

// gain is how much more the trial must flush than the old setting to be
// kept. Fewer batches in flight need only flush as much: each batch costs
// the store a statement and a commit, and a setting that does no better
// with more of them only spends more.
func (l *limit) gain() float64 {
	if l.trying < l.from {
		return 1
	}
	return better
}

// probe starts the trial of the setting step away in its direction, within
// 1..max, turning around, one step at a time, where it cannot move.
func (l *limit) probe() {
	next := min(l.max, max(1, l.current+l.sign*l.step))
	if next == l.current {
		l.sign, l.step = -l.sign, 1
		next = min(l.max, max(1, l.current+l.sign*l.step))
	}
	if next == l.current {
		return
	}
	l.from, l.trying, l.current = l.current, next, next
}

// fail ends a probe that did not pay: back to the old setting, the other
// way next time, after a wait that grows while probes keep failing.
func (l *limit) fail() {
	l.current, l.trying, l.tried, l.step, l.sign = l.from, 0, 0, 1, -l.sign
	l.calm, l.patience = l.patience, min(maxCalm, 2*l.patience)
}

// close lets every writer through, for the final drain.
func (l *limit) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.changed.Broadcast()
}

// writers is the current limit, for metrics.
func (l *limit) writers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current
}
