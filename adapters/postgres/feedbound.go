package postgres

import (
	"math"
	"sync/atomic"
)

// rowSize is how many events the rows of plant_events that the last batch
// of feed pages read held on average: a statement stores its events in one
// row, so a row holds one event when writes come alone and tens when they
// come in batches. A page then reads about the rows it needs, where the
// bound that always suffices, one row per event and one more, would read
// ten times as many rows of a busy feed, and their lines, to take a tenth
// of them.
type rowSize struct {
	events atomic.Uint64 // float64 bits; 0 until pages have read rows
}

// bound is how many rows a page of limit events reads: half again the
// rows that hold limit events at the recent size, and two more for the
// first row, which may hold events before the page's position, and the
// last; at most limit + 1, which always suffices.
func (e *rowSize) bound(limit int) int {
	size := max(1, math.Float64frombits(e.events.Load()))
	return int(min(float64(limit+1), math.Ceil(1.5*float64(limit)/size)+2))
}

// observe takes the size of rows that pages read: events in rows.
func (e *rowSize) observe(rows, events int) {
	if rows > 0 {
		e.events.Store(math.Float64bits(float64(events) / float64(rows)))
	}
}

// single reports whether rows held about one event lately: a page then
// takes nearly every row it reads (readWholeFeedPages).
func (e *rowSize) single() bool { return math.Float64frombits(e.events.Load()) < 2 }
