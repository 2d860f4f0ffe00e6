package httpapi

import (
	"container/list"
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
)

// DefaultPageBytes is the default bound on the bytes of list and feed pages
// the API holds at once. A page of 1,000 of the largest plants is about
// 1.1 MB, and a client that reads its answer slowly keeps the page until
// it has read it or the write timeout ends it: without a bound, the
// connection limit's 512 slow readers held 640 MB
// (docs/operations.md, "Admission").
const DefaultPageBytes = 16 << 20

// errPagesBusy is a page that found no room in the page budget before its
// deadline.
var errPagesBusy = errors.New("the service is busy sending other pages, retry later")

// pageBudget bounds the bytes of the list and feed pages being answered at
// once, from the store's reading of a page to its last byte written. A page
// reserves room for the largest page its limit allows, twice over (the
// store's result and the rendered page are both held while it is
// rendered), before the store is asked; once rendered it keeps only its
// own size until it is written. A page that finds no room waits for it,
// holding nothing, within its request's deadline. Waiting is not a queue:
// whichever page fits the room a release makes goes, so that pages of the
// default size are not held behind large ones that wait for more room.
type pageBudget struct {
	size int64

	mu      sync.Mutex
	free    int64
	waiting list.List // of *pageWaiter, the pages waiting for room
}

// pageWaiter is a page waiting for want bytes of room; ready is closed
// once they are its.
type pageWaiter struct {
	want  int64
	ready chan struct{}
}

func newPageBudget(size int64) *pageBudget {
	if size <= 0 {
		size = DefaultPageBytes
	}
	return &pageBudget{size: size, free: size}
}

// pageHold is the room a page holds in the budget.
type pageHold struct {
	budget *pageBudget
	held   int64
}

// reserve waits, within ctx, for room for a page of at most n bytes.
func (b *pageBudget) reserve(ctx context.Context, n int64) (pageHold, error) {
	want := min(2*n, b.size)
	b.mu.Lock()
	if b.free >= want {
		b.free -= want
		b.mu.Unlock()
		return pageHold{budget: b, held: want}, nil
	}
	w := &pageWaiter{want: want, ready: make(chan struct{})}
	e := b.waiting.PushBack(w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return pageHold{budget: b, held: want}, nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	select {
	case <-w.ready: // the room came as the deadline did: give it on
		b.mu.Unlock()
		b.give(want)
	default:
		b.waiting.Remove(e)
		b.mu.Unlock()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return pageHold{}, errPagesBusy
	}
	return pageHold{}, ctx.Err()
}

// give returns n bytes to the budget, and the room to each waiting page,
// oldest first, that it fits.
func (b *pageBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.free += n
	for e := b.waiting.Front(); e != nil && b.free > 0; {
		next := e.Next()
		if w := e.Value.(*pageWaiter); w.want <= b.free {
			b.free -= w.want
			b.waiting.Remove(e)
			close(w.ready)
		}
		e = next
	}
}

// keep gives back all but n bytes of the hold: the page is rendered, and n
// is its size.
func (h *pageHold) keep(n int) {
	if rest := h.held - int64(n); rest > 0 {
		h.budget.give(rest)
		h.held = int64(n)
	}
}

// release gives the hold back: the page is written, or was never rendered.
func (h *pageHold) release() {
	h.budget.give(h.held)
	h.held = 0
}

// reservePage reserves room in the page budget for a page of at most n
// bytes of operation; when none comes within the request's deadline, it
// counts the operation and answers, and reports that it did.
func (a *API) reservePage(w http.ResponseWriter, r *http.Request, operation string, n int64) (pageHold, bool) {
	hold, err := a.pages.reserve(r.Context(), n)
	if err != nil {
		a.metrics.operation(operation, outcome("listed", err))
		a.writeError(w, r, err)
		return pageHold{}, false
	}
	return hold, true
}

// listPageBytes and eventPageBytes bound the bytes of a page of limit
// plants or events: a JSON array of them.
func listPageBytes(limit int) int64  { return 2 + int64(limit)*int64(plantjson.MaxItemBytes+1) }
func eventPageBytes(limit int) int64 { return 2 + int64(limit)*int64(plantjson.MaxEventBytes+1) }
