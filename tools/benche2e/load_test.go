package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// The load sends the scenario's requests with the token, and counts what is
// not 2xx; here the server refuses every id it has seen before, so a
// repeated id would show as a failure.
func TestHTTPLoadSendsDistinctCreatesAndCountsNon2xx(t *testing.T) {
	var seen sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		}
		if r.Method != "POST" || r.URL.Path != "/plants" || r.Header.Get("Authorization") != "Bearer tok" ||
			r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&p) != nil || p.Name == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if _, dup := seen.LoadOrStore(p.ID, true); dup {
			w.WriteHeader(http.StatusConflict)
		}
	}))
	defer srv.Close()
	b := &bench{o: options{preload: 1000, warmup: 50 * time.Millisecond, duration: 200 * time.Millisecond}, token: "tok"}
	for _, rate := range []int{0, 200} {
		s, err := b.vegetaLoad(context.Background(), srv.URL, &cell{sc: scenarios[0], conns: 4, rate: rate}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.completed == 0 || s.failed != 0 || len(s.latencies) != s.completed {
			t.Errorf("rate %d: %d completed, %d failed, %d latencies; want some, none failed, one each", rate, s.completed, s.failed, len(s.latencies))
		}
	}
	get := scenarios[1]
	s, err := b.vegetaLoad(context.Background(), srv.URL, &cell{sc: get, conns: 2}, nil)
	if err != nil || s.completed == 0 || s.failed != s.completed {
		t.Errorf("gets: %v, %d of %d failed; want every one refused", err, s.failed, s.completed)
	}
}
