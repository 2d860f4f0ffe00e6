package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// openLoopWorkers bounds the requests in flight of an open-loop cell: past
// it the service is hopelessly behind the rate, and the file descriptors of
// both programs would run out.
const openLoopWorkers = 2000

// httpLoad loads the service at base with the cell's requests for the
// warm-up and the window, and measures the requests that end in the window:
// a closed loop by wrk (wrkLoad) at fixed concurrency, an open loop by
// vegeta at a rate.
func (b *bench) httpLoad(ctx context.Context, base string, c *cell, servicePID int) (*sample, error) {
	if c.rate == 0 {
		return b.wrkLoad(ctx, base, c, servicePID)
	}
	cpu := probeCPU(ctx, c.store, b.o.warmup, b.length(c), servicePID, 0, -1)
	s, err := b.vegetaLoad(ctx, base, c, nil)
	if err == nil {
		s.cpu = <-cpu
	}
	return s, err
}

// length is the measured window of a cell: -duration, or the cell's own.
func (b *bench) length(c *cell) time.Duration {
	if c.duration > 0 {
		return c.duration
	}
	return b.o.duration
}

// vegetaLoad is the open loop of a cell: requests leave on schedule whatever
// the service answers, so that a stalled service shows in the latencies
// instead of slowing the load (no coordinated omission). Without a rate it
// is a closed loop, one worker per connection, which tests use. vegeta adds
// an X-Vegeta-Seq header to every request. each, when not nil, sees every
// result that ends in the window with the body of its request.
func (b *bench) vegetaLoad(ctx context.Context, base string, c *cell, each func(res *vegeta.Result, sent []byte)) (*sample, error) {
	header := http.Header{"Authorization": {"Bearer " + b.token}, "Content-Type": {"application/json"}}
	for k, v := range c.sc.header {
		header.Set(k, v)
	}
	targeter := func(t *vegeta.Target) error {
		var path string
		var body []byte
		if c.sc.feed {
			path = fmt.Sprintf("/events?limit=%d&after=%s", listLimit, c.store.cursors[rand.IntN(len(c.store.cursors))])
		} else {
			path, body = c.sc.request(c.sc.id(b.o.preload, c.ids))
		}
		t.Method, t.URL, t.Body, t.Header = c.sc.method, base+path, body, header
		return nil
	}
	workers := uint64(c.conns)
	if c.rate > 0 {
		workers = openLoopWorkers
	}
	transport := &http.Transport{MaxConnsPerHost: int(workers), MaxIdleConnsPerHost: int(workers), DisableCompression: true}
	defer transport.CloseIdleConnections()
	var client http.RoundTripper = transport
	bodies := &requestBodies{next: transport, bySeq: map[uint64][]byte{}}
	if each != nil {
		client = bodies
	}
	attacker := vegeta.NewAttacker(
		vegeta.Client(&http.Client{Transport: client, Timeout: 30 * time.Second}),
		vegeta.Workers(uint64(c.conns)), vegeta.MaxWorkers(workers),
		vegeta.MaxBody(0), // the body is read and dropped, not kept
	)
	defer context.AfterFunc(ctx, func() { attacker.Stop() })()

	s, w := b.newSample(b.length(c))
	for res := range attacker.Attack(targeter, vegeta.Rate{Freq: c.rate, Per: time.Second}, b.o.warmup+s.window, "") {
		var sent []byte
		if each != nil {
			sent = bodies.take(res.Seq)
		}
		if !w.contains(res.End()) {
			continue
		}
		if each != nil {
			each(res, sent)
		}
		s.completed++
		if res.Code < 200 || res.Code > 299 {
			s.failed++
		}
		s.latencies = append(s.latencies, res.Latency)
	}
	return s, ctx.Err()
}

// requestBodies keeps the body of every request it passes on, by vegeta's
// X-Vegeta-Seq, until take: a vegeta Result has the answer but not what
// was asked, and the targeter cannot know the sequence number it fills.
type requestBodies struct {
	next  http.RoundTripper
	mu    sync.Mutex
	bySeq map[uint64][]byte
}

func (rb *requestBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	seq, err := strconv.ParseUint(req.Header.Get("X-Vegeta-Seq"), 10, 64)
	if err == nil && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(body)
			rb.mu.Lock()
			rb.bySeq[seq] = data
			rb.mu.Unlock()
		}
	}
	return rb.next.RoundTrip(req)
}

// take returns and forgets the body of request seq; nil if none was kept.
func (rb *requestBodies) take(seq uint64) []byte {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	data := rb.bySeq[seq]
	delete(rb.bySeq, seq)
	return data
}
