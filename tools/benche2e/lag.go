package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// pendingGauge is the service's count of events waiting in the outbox.
const pendingGauge = "plantstore_webhook_events_pending"

// lag creates plants at the cell's rate, open loop, with one receiver
// configured, and measures for every create acknowledged (200) in the
// window the time from the client reading its answer to the receiver
// getting the event, matched by plant id: the lag an application that
// reacts to new plants sees. After the window it waits up to -lag-drain for
// the events still on their way, then counts the acknowledged plants not
// announced. Meanwhile it reads the service's pending gauge every second,
// whose maximum shows whether the outbox stays bounded at that rate.
func (b *bench) lag(ctx context.Context, c *cell, svc *service) (*sample, error) {
	stopWatch := watchGauge(ctx, "http://"+svc.admin+"/metrics", pendingGauge)
	cpu := probeCPU(ctx, c.store, b.o.warmup, b.length(c), svc.cmd.Process.Pid, 0, -1)
	acked := map[int64]time.Time{} // plant id → when the client had its 200
	s, err := b.vegetaLoad(ctx, "http://"+svc.api, c, func(res *vegeta.Result, sent []byte) {
		if id, ok := plantID(sent); ok && res.Code == http.StatusOK {
			acked[id] = res.End()
		}
	})
	if err != nil {
		_, _ = stopWatch()
		return nil, err
	}
	s.cpu = <-cpu
	s.delivered = b.rc.countIn(window{s.began, s.began.Add(s.window)})
	for drain := time.Now().Add(b.o.lagDrain); time.Now().Before(drain) && ctx.Err() == nil; {
		if _, missing := matchLags(acked, b.rc.arrival); missing == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.latencies, s.unannounced = matchLags(acked, b.rc.arrival)
	pending, err := stopWatch()
	s.pending = int(pending)
	return s, err
}

// plantID returns the id of the plant a create's body carries: the answer
// of a create has no id, so a result is matched by the request's.
func plantID(body []byte) (int64, bool) {
	var p struct {
		ID *int64 `json:"id"`
	}
	if json.Unmarshal(body, &p) != nil || p.ID == nil {
		return 0, false
	}
	return *p.ID, true
}

// matchLags returns the lag of every acknowledged plant that arrived, from
// its acknowledgement to its first arrival, and how many did not arrive. An
// event may reach the receiver before the client has read its answer: that
// lag counts as zero.
func matchLags(acked map[int64]time.Time, arrival func(id int64) (time.Time, bool)) (lags []time.Duration, missing int) {
	lags = make([]time.Duration, 0, len(acked))
	for id, at := range acked {
		if got, ok := arrival(id); ok {
			lags = append(lags, max(0, got.Sub(at)))
		} else {
			missing++
		}
	}
	return lags, missing
}

// watchGauge reads an unlabelled gauge from the Prometheus text at url
// every second, the first time now, until the returned function is called;
// that returns the highest value read, or an error when no read succeeded.
// A service too busy to answer a scrape within a second skips that sample.
func watchGauge(ctx context.Context, url, name string) (stop func() (float64, error)) {
	done, result := make(chan struct{}), make(chan error, 1)
	highest, reads := 0.0, 0
	go func() {
		client := &http.Client{Timeout: time.Second}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var last error
		for {
			v, err := scrape(ctx, client, url, name)
			if err == nil {
				highest, reads = max(highest, v), reads+1
			} else {
				last = err
			}
			select {
			case <-tick.C:
				continue
			case <-done:
			case <-ctx.Done():
				<-done
			}
			if reads > 0 {
				last = nil
			}
			result <- last
			return
		}
	}()
	return func() (float64, error) {
		close(done)
		err := <-result
		return highest, err
	}
}

// scrape reads the gauge name once.
func scrape(ctx context.Context, client *http.Client, url, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err != nil {
		return 0, err
	}
	return gaugeValue(string(text), name)
}

// gaugeValue finds the sample of an unlabelled metric in Prometheus's text
// exposition format: a line "name value [timestamp]".
func gaugeValue(text, name string) (float64, error) {
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return strconv.ParseFloat(f[0], 64)
			}
		}
	}
	return 0, fmt.Errorf("no %s in the metrics", name)
}
