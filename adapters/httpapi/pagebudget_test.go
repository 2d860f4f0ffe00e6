package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
	"github.com/plantstore/plantstore/adapters/memory"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// stalledWriter is a ResponseWriter whose client reads nothing until
// released: its first Write blocks, as a write to a slow reader's full
// socket does.
type stalledWriter struct {
	*httptest.ResponseRecorder
	writing chan struct{} // closed when the first Write starts
	release chan struct{} // closed by the test to let it finish
}

func newStalledWriter() *stalledWriter {
	return &stalledWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), release: make(chan struct{})}
}

func (w *stalledWriter) Write(b []byte) (int, error) {
	select {
	case <-w.writing:
	default:
		close(w.writing)
	}
	<-w.release
	return w.ResponseRecorder.Write(b)
}

// Pages answered at once are bounded in bytes: while a slow reader holds a
// page, a page that would take the budget past its bound waits, holding
// nothing, and gets 503 50301 at its deadline; a smaller one that fits the
// room the held page left is served; once the slow reader has read, pages
// are served again. The held page keeps only its own size, not the room it
// reserved for the largest page of its limit.
func TestPagesBeyondThePageBudgetWaitForRoom(t *testing.T) {
	for _, tt := range []struct {
		path  string
		bytes func(limit int) int64
	}{
		{"/plants", listPageBytes},
		{"/events", eventPageBytes},
	} {
		t.Run(tt.path, func(t *testing.T) { testPageBudget(t, tt.path, tt.bytes) })
	}
}

func testPageBudget(t *testing.T, path string, pageBytes func(limit int) int64) {
	const limit = 10
	store := memory.New()
	for id := range int64(limit) {
		np, err := domain.ParseNewPlant(domain.PlantFields{ID: id, Name: "Aloe " + strconv.FormatInt(id, 10)})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := store.InsertIfAbsent(context.Background(), application.Record{Plant: domain.PlantFrom(np), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	deps := useCases(store, everyScope)
	deps.Verifier, deps.Log = jwttest.New(t).Verifier(t), slog.New(slog.DiscardHandler)
	api, err := New(Config{RequestTimeout: 50 * time.Millisecond, PageBytes: 2 * pageBytes(limit)}, deps)
	if err != nil {
		t.Fatal(err)
	}
	list := func(limit int) *http.Request {
		r := httptest.NewRequest(http.MethodGet, path+"?limit="+strconv.Itoa(limit), nil)
		r.Header.Set("Authorization", bearer(t))
		return r
	}

	slow := newStalledWriter()
	served := make(chan struct{})
	go func() { defer close(served); api.ServeHTTP(slow, list(limit)) }()
	<-slow.writing

	busy := record(t, api, list(limit))
	var e struct {
		Error   int32  `json:"error"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(busy.Body.Bytes(), &e); err != nil || busy.Code != 503 || e.Error != 50301 ||
		e.Message != errPagesBusy.Error() || busy.Header().Get("Retry-After") == "" {
		t.Fatalf("a page past the budget: %d %s; want 503 50301 with Retry-After", busy.Code, busy.Body)
	}
	if w := record(t, api, list(limit/2)); w.Code != http.StatusOK {
		t.Fatalf("a page that fits beside the held one: %d %s", w.Code, w.Body)
	}

	close(slow.release)
	<-served
	if slow.Code != http.StatusOK {
		t.Fatalf("the slow reader's page: %d %s", slow.Code, slow.Body)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(slow.Body.Bytes(), &items); err != nil || len(items) != limit {
		t.Fatalf("the slow reader's page: %d items, %v", len(items), err)
	}
	if w := record(t, api, list(limit)); w.Code != http.StatusOK {
		t.Fatalf("once the slow reader has read: %d %s", w.Code, w.Body)
	}
	if w := record(t, api, list(limit)); w.Code != http.StatusOK {
		t.Fatalf("the room is given back after each page: %d %s", w.Code, w.Body)
	}
}

// A page that fits the room left goes at once, even while a larger one
// waits for more: waiting is not a queue that holds small pages behind
// large ones. The larger one goes once the room is given back.
func TestASmallPageIsNotHeldBehindALargeOneWaiting(t *testing.T) {
	b := newPageBudget(100)
	first, err := b.reserve(context.Background(), 40) // holds 80 of 100
	if err != nil {
		t.Fatal(err)
	}
	large := make(chan error, 1)
	go func() {
		h, err := b.reserve(context.Background(), 50) // wants all 100
		if err == nil {
			h.release()
		}
		large <- err
	}()
	waiting := func() int { b.mu.Lock(); defer b.mu.Unlock(); return b.waiting.Len() }
	for waiting() == 0 {
		runtime.Gosched()
	}

	ctx, cancel := context.WithTimeout(context.Background(), closeBound)
	defer cancel()
	small, err := b.reserve(ctx, 10) // wants 20, the room left
	if err != nil {
		t.Fatalf("a page that fits waited behind a larger one: %v", err)
	}
	select {
	case err := <-large:
		t.Fatalf("the larger page went without room: %v", err)
	default:
	}
	small.release()
	first.release()
	if err := <-large; err != nil {
		t.Fatalf("the larger page, once the room was given back: %v", err)
	}
	if b.free != b.size {
		t.Fatalf("%d of %d bytes free after every page gave its room back", b.free, b.size)
	}
}

// Pages of every size reserving, keeping, giving back and giving up at
// their deadlines all at once never take the budget past its size, and
// leave all of it free once done.
func TestThePageBudgetHoldsUnderContention(t *testing.T) {
	const size = 1000
	b := newPageBudget(size)
	var wg sync.WaitGroup
	var over atomic.Bool
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				n := int64(1 + (g*37+i*11)%400)
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%3)*time.Millisecond)
				h, err := b.reserve(ctx, n)
				cancel()
				if err != nil {
					continue
				}
				b.mu.Lock()
				if b.free < 0 {
					over.Store(true)
				}
				b.mu.Unlock()
				h.keep(int(n / 2))
				runtime.Gosched()
				h.release()
			}
		})
	}
	wg.Wait()
	if over.Load() {
		t.Fatal("the budget was taken past its size")
	}
	if b.free != size || b.waiting.Len() != 0 {
		t.Fatalf("%d of %d bytes free and %d pages waiting once every page is done", b.free, size, b.waiting.Len())
	}
}

// BenchmarkPageBudget is what the budget adds to a page when no page
// waits: a reservation for a page of 100 events, kept to its size, given
// back, from as many goroutines as GOMAXPROCS.
func BenchmarkPageBudget(b *testing.B) {
	budget := newPageBudget(DefaultPageBytes)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h, err := budget.reserve(ctx, eventPageBytes(100))
			if err != nil {
				b.Fatal(err)
			}
			h.keep(16 << 10)
			h.release()
		}
	})
}
