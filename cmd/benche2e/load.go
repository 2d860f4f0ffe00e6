package main

import (
	"context"
	"net/http"
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
	cpu := probeCPU(ctx, b.o.warmup, b.o.duration, servicePID, 0)
	s, err := b.vegetaLoad(ctx, base, c)
	if err == nil {
		s.cpu = <-cpu
	}
	return s, err
}

// vegetaLoad is the open loop of a cell: requests leave on schedule whatever
// the service answers, so that a stalled service shows in the latencies
// instead of slowing the load (no coordinated omission). Without a rate it
// is a closed loop, one worker per connection, which tests use. vegeta adds
// an X-Vegeta-Seq header to every request.
func (b *bench) vegetaLoad(ctx context.Context, base string, c *cell) (*sample, error) {
	header := http.Header{"Authorization": {"Bearer " + b.token}, "Content-Type": {"application/json"}}
	targeter := func(t *vegeta.Target) error {
		path, body := c.sc.request(c.sc.id(b.o.preload, c.ids))
		t.Method, t.URL, t.Body, t.Header = c.sc.method, base+path, body, header
		return nil
	}
	workers := uint64(c.conns)
	if c.rate > 0 {
		workers = openLoopWorkers
	}
	transport := &http.Transport{MaxConnsPerHost: int(workers), MaxIdleConnsPerHost: int(workers), DisableCompression: true}
	defer transport.CloseIdleConnections()
	attacker := vegeta.NewAttacker(
		vegeta.Client(&http.Client{Transport: transport, Timeout: 30 * time.Second}),
		vegeta.Workers(uint64(c.conns)), vegeta.MaxWorkers(workers),
		vegeta.MaxBody(0), // the body is read and dropped, not kept
	)
	defer context.AfterFunc(ctx, func() { attacker.Stop() })()

	s, w := b.newSample()
	for res := range attacker.Attack(targeter, vegeta.Rate{Freq: c.rate, Per: time.Second}, b.o.warmup+b.o.duration, "") {
		if !w.contains(res.End()) {
			continue
		}
		s.completed++
		if res.Code < 200 || res.Code > 299 {
			s.failed++
		}
		s.latencies = append(s.latencies, res.Latency)
	}
	return s, ctx.Err()
}
