package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// wrk's scripts send each scenario's requests with the token: creates with
// distinct ids, deletes taking each id of the cell's range once, changes
// with a name, reads with If-None-Match, pages of the feed after one of the
// cell's cursors, and the result line counts what is an error (304 is not).
func TestWrkSendsTheScenariosRequests(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk is not installed")
	}
	var seen sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		key := r.Method + " " + r.URL.Path
		if r.Method == "POST" {
			var p struct{ ID int64 }
			if json.NewDecoder(r.Body).Decode(&p) != nil || p.ID < 1<<62 {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			key += strconv.FormatInt(p.ID, 10)
		}
		if r.Method == "PATCH" {
			var p struct{ Name string }
			if json.NewDecoder(r.Body).Decode(&p) != nil || !strings.HasPrefix(p.Name, "Monstera ") {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
		}
		if r.URL.Path == "/events" {
			if after := r.URL.Query().Get("after"); after != "c1" && after != "c2" || r.URL.Query().Get("limit") != "100" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			seen.Store("events", true)
		}
		if r.Header.Get("If-None-Match") == "*" {
			seen.Store("not modified", true)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if _, dup := seen.LoadOrStore(key, true); dup && (r.Method == "POST" || r.Method == "DELETE") {
			w.WriteHeader(http.StatusConflict)
		}
	}))
	defer srv.Close()
	b := &bench{o: options{preload: 1000, duration: time.Second}, token: "tok", dir: t.TempDir()}
	for i, sc := range scenarios {
		if sc.measure != nil {
			continue // no closed loop: lag is open, deliver has no load
		}
		c := &cell{sc: sc, conns: 4}
		first := int64(i+1) << 40 // each consuming cell's range of its own, as newCells gives them
		if sc.consumes {
			c.ids = newIDRange(first)
		}
		if sc.feed {
			c.store = &store{cursors: []string{"c1", "c2"}}
		}
		s, err := b.wrkLoad(context.Background(), srv.URL, c, -1)
		if err != nil {
			t.Fatal(err)
		}
		if s.completed == 0 || s.failed != 0 || s.percentile(0.99) == 0 {
			t.Errorf("%s: %d completed, %d failed, p99 %v; want some, none failed", sc.name, s.completed, s.failed, s.percentile(0.99))
		}
		// Each thread takes its own ids in turn, so the range moves on by
		// the thread count times the most any thread took: a little more
		// than the requests, never less.
		if sc.consumes {
			if used := c.ids.next.Load() - first; used < int64(s.completed) || used > int64(s.completed)*3/2 {
				t.Errorf("%s: %d requests took %d ids of the range", sc.name, s.completed, used)
			}
		}
	}
	count := 0
	seen.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), "DELETE /plants/") {
			count++
		}
		return true
	})
	if count == 0 {
		t.Error("no delete reached the server")
	}
	if _, ok := seen.Load("not modified"); !ok {
		t.Error("no read with If-None-Match reached the server")
	}
	if _, ok := seen.Load("events"); !ok {
		t.Error("no page of the event feed reached the server")
	}
}
