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
type limit struct {
	mu      sync.Mutex
	changed sync.Cond
	max     int
	current int
	active  int // writers holding a permit
	closed  bool

	// The window measuring the current setting.
	since            time.Time
	items, flushes   int
	held             int // flushes that ended with items waiting
	before           float64
	from, step, sign int // the setting before a move, its size, its direction
	calm             int // windows to wait before the next move
	now              func() time.Time
}

// window bounds one measurement: at least this long and this many flushes.
const (
	windowTime    = 50 * time.Millisecond
	windowFlushes = 8
	// better is the gain a move must show to be kept, above the noise.
	better = 1.05
)

func newLimit(max int) *limit {
	l := &limit{max: max, current: 1, step: 1, sign: 1, now: time.Now}
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
	case l.from != 0 && rate >= better*l.before:
		// The move paid: go on, further.
		l.before, l.from = rate, l.current
		l.step *= 2
		l.move()
	case l.from != 0:
		// It did not: undo it, and try the other way next time.
		l.current, l.from, l.step, l.sign, l.calm = l.from, 0, 1, -l.sign, 4
	case busy && l.calm > 0:
		l.calm--
	case busy:
		l.before, l.from = rate, l.current
		l.move()
	}
}

// move changes the setting by step in its direction, within 1..max; a move
// that cannot be made turns around.
func (l *limit) move() {
	next := min(l.max, max(1, l.current+l.sign*l.step))
	if next == l.current {
		l.sign = -l.sign
		next = min(l.max, max(1, l.current+l.sign*l.step))
	}
	if next == l.current {
		l.from = 0
		return
	}
	l.current = next
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
