package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// A lag runs from the client's answer to the first arrival; an event that
// beat the answer counts as zero, and one that never came is missing.
func TestLagsMatchAnswersWithArrivalsByPlant(t *testing.T) {
	t0 := time.Unix(1000, 0)
	acked := map[int64]time.Time{1: t0, 2: t0, 3: t0.Add(time.Second), 4: t0}
	arrived := map[int64]time.Time{1: t0.Add(5 * time.Millisecond), 2: t0.Add(-time.Millisecond), 3: t0.Add(1300 * time.Millisecond), 99: t0}
	lags, missing := matchLags(acked, func(id int64) (time.Time, bool) { at, ok := arrived[id]; return at, ok })
	slices.Sort(lags)
	if want := []time.Duration{0, 5 * time.Millisecond, 300 * time.Millisecond}; !slices.Equal(lags, want) || missing != 1 {
		t.Errorf("lags %v, %d missing; want %v and plant 4 missing", lags, missing, want)
	}
}

func TestGaugeValueReadsTheUnlabelledSample(t *testing.T) {
	text := `# HELP plantstore_webhook_events_pending_total not this one
plantstore_webhook_events_pending_total 5
# TYPE plantstore_webhook_events_pending gauge
plantstore_webhook_events_pending 1.234e+06
plantstore_webhook_oldest_pending_seconds 2.5
`
	if v, err := gaugeValue(text, pendingGauge); err != nil || v != 1_234_000 {
		t.Errorf("gaugeValue = %v, %v; want 1234000", v, err)
	}
	if _, err := gaugeValue("go_goroutines 7\n", pendingGauge); err == nil {
		t.Error("a missing gauge was read")
	}
}

// The watcher keeps the highest value of its scrapes, the first one taken
// at once, and fails only when no scrape succeeded.
func TestWatchGaugeKeepsTheHighestValue(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %d\n", pendingGauge, []int{40, 7}[min(1, n.Add(1)-1)])
	}))
	defer srv.Close()
	stop := watchGauge(context.Background(), srv.URL, pendingGauge)
	require.Eventually(t, func() bool { return n.Load() >= 2 }, time.Minute, 10*time.Millisecond, "the watcher scrapes again")
	if v, err := stop(); v != 40 || err != nil || n.Load() < 2 {
		t.Errorf("highest %v, %v after %d scrapes; want 40 of two scrapes", v, err, n.Load())
	}
	srv.Close()
	if _, err := watchGauge(context.Background(), srv.URL, pendingGauge)(); err == nil {
		t.Error("no error when every scrape failed")
	}
}

// The open loop hands each result in the window the body its request sent,
// so that an answer can be matched with the plant it created.
func TestVegetaLoadGivesEachResultItsRequest(t *testing.T) {
	var seen sync.Map // X-Vegeta-Seq → plant id
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct{ ID int64 }
		_ = json.NewDecoder(r.Body).Decode(&p)
		seen.Store(r.Header.Get("X-Vegeta-Seq"), p.ID)
	}))
	defer srv.Close()
	b := &bench{o: options{warmup: 50 * time.Millisecond, duration: 300 * time.Millisecond}, token: "tok"}
	matched := 0
	s, err := b.vegetaLoad(context.Background(), srv.URL, &cell{sc: scenarioNamed("lag"), rate: 300}, func(res *vegeta.Result, sent []byte) {
		id, ok := plantID(sent)
		if want, _ := seen.Load(fmt.Sprint(res.Seq)); !ok || want != id {
			t.Errorf("result %d: request body %q, the server saw plant %v", res.Seq, sent, want)
		}
		matched++
	})
	if err != nil || s.completed == 0 || matched != s.completed {
		t.Errorf("%v: %d completed, %d matched", err, s.completed, matched)
	}
}
