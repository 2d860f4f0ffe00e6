package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/plantstore/plantstore/adapters/webhook"
)

// withWebhook adds the webhook's scenarios to the plant ones: create+hook,
// change+hook and delete+hook are create, change and delete with one
// receiver configured, each compared with the same reference as the write
// alone, so that its ratio shows what announcing costs (with the plant
// payload only creates announce; -variant measures both payloads side by
// side, PLANTSTORE_WEBHOOK_PAYLOAD=plant and =event); lag and deliver
// measure the delivery itself and have no reference.
func withWebhook(plain []scenario) []scenario {
	hooked := func(name string) scenario {
		sc := plain[slices.IndexFunc(plain, func(sc scenario) bool { return sc.name == name })]
		sc.name, sc.hook, sc.refOp = name+"+hook", true, name
		return sc
	}
	create := hooked("create")
	lag := create
	lag.name, lag.measure = "lag", (*bench).lag
	return append(plain, create, hooked("change"), hooked("delete"), lag, scenario{name: "deliver", hook: true, measure: (*bench).deliver})
}

// receiver is the webhook receiver of the whole run, in this process: it
// verifies every delivery as a real receiver would (webhook.NewReceiver,
// HMAC-SHA256 included), of either payload, and keeps when each plant was
// first announced (a new plant, or its plant.created event) and when each
// other event (a change's, a delete's) first arrived. Its CPU is read apart
// from the load's where the load is another process.
type receiver struct {
	url string
	srv *http.Server

	mu      sync.Mutex
	arrived map[int64]time.Time // plant id → first arrival of its create
	events  map[int64]time.Time // event number → first arrival of a change or a delete
	latest  time.Time           // the latest first arrival
}

// startReceiver writes a fresh signing secret into dir, as
// PLANTSTORE_WEBHOOK_SECRET_FILE reads it, and starts the receiver on a
// loopback port. It returns the receiver and the secret file.
func startReceiver(dir string) (*receiver, string, error) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	text := "whsec_" + base64.StdEncoding.EncodeToString(key)
	secret, err := webhook.ParseSecret(text)
	if err != nil {
		return nil, "", err
	}
	file := filepath.Join(dir, "webhook.secret")
	if err := os.WriteFile(file, []byte(text+"\n"), 0o600); err != nil {
		return nil, "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	r := &receiver{url: "http://" + l.Addr().String() + "/hook", arrived: map[int64]time.Time{}, events: map[int64]time.Time{}}
	r.srv = &http.Server{Handler: webhook.NewReceiver(secret, r.deliver), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := r.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			progress("webhook receiver: %v", err)
		}
	}()
	return r, file, nil
}

// deliver records a delivery; a repeat (at-least-once delivery) keeps the
// first arrival.
func (r *receiver) deliver(d webhook.Delivery) {
	now := time.Now()
	firsts, key := r.arrived, int64(d.Plant.ID())
	if d.Type != "" && d.Type != "plant.created" {
		firsts, key = r.events, d.Number
	}
	r.mu.Lock()
	if _, dup := firsts[key]; !dup {
		firsts[key] = now
		r.latest = now
	}
	r.mu.Unlock()
}

// reset forgets every arrival, before a cell.
func (r *receiver) reset() {
	r.mu.Lock()
	clear(r.arrived)
	clear(r.events)
	r.latest = time.Time{}
	r.mu.Unlock()
}

// arrival returns when the plant id was first announced.
func (r *receiver) arrival(id int64) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.arrived[id]
	return t, ok
}

// count returns the plants and other events announced so far, and the
// latest first arrival.
func (r *receiver) count() (int, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.arrived) + len(r.events), r.latest
}

// countIn returns the plants and other events first announced inside w.
func (r *receiver) countIn(w window) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, firsts := range []map[int64]time.Time{r.arrived, r.events} {
		for _, t := range firsts {
			if w.contains(t) {
				n++
			}
		}
	}
	return n
}

func (r *receiver) close() { _ = r.srv.Close() }

// hookProgress is what a webhook cell adds to its progress line: the
// events its receiver got in the window per second, which shows whether the
// deliveries keep up with the writes; for lag also what the table's
// webhook column shows.
func hookProgress(c *cell, s *sample) string {
	if !c.sc.hook {
		return ""
	}
	line := fmt.Sprintf("  delivered %.0f/s", float64(s.delivered)/s.window.Seconds())
	if c.sc.name == "lag" {
		line += fmt.Sprintf(" unannounced %d pending max %d", s.unannounced, s.pending)
	}
	return line
}

// webhookColumn is the table's webhook column: the events delivered per
// second in the window (medians of the rounds), for lag the largest lag,
// the plants never announced (all rounds) and the highest pending gauge
// (any round), for deliver the events each round started from.
func (b *bench) webhookColumn(c *cell) string {
	switch {
	case !c.sc.hook:
		return "–"
	case c.sc.name == "deliver":
		return fmt.Sprintf("%d events in the outbox", b.o.deliverEvents)
	}
	text := fmt.Sprintf("delivered %.0f/s", median(values(c, func(s *sample) float64 { return float64(s.delivered) / s.window.Seconds() })))
	if c.sc.name == "lag" {
		unannounced := 0
		for _, s := range c.samples {
			unannounced += s.unannounced
		}
		text += fmt.Sprintf("; p50, p99: lag; max %s; %d unannounced; pending ≤ %.0f",
			ms(c, 1), unannounced, slices.Max(values(c, func(s *sample) float64 { return float64(s.pending) })))
	}
	return text
}
