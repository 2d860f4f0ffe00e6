package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// plantsServer answers POST /plants like the service: it checks the token
// and the body, and answers a Plant. Odd ids get a 409, so that failures are
// counted. chunked makes it stream the answer; closeAfter makes it close
// every connection after that many requests.
func plantsServer(t *testing.T, chunked bool, closeAfter int) (*httptest.Server, *sync.Map) {
	t.Helper()
	var seen sync.Map
	var mu sync.Mutex
	served := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/plants" || r.Header.Get("Authorization") != "Bearer tok" ||
			r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request line or headers", http.StatusBadRequest)
			return
		}
		var p struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
			Tag  string `json:"tag"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil || p.ID <= 0 || p.Name == "" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		if _, dup := seen.LoadOrStore(p.ID, true); dup {
			http.Error(w, "id reused", http.StatusConflict)
			return
		}
		if closeAfter > 0 {
			mu.Lock()
			served[r.RemoteAddr]++
			if served[r.RemoteAddr] >= closeAfter {
				w.Header().Set("Connection", "close")
			}
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		if chunked {
			w.(http.Flusher).Flush()
		}
		_, _ = io.WriteString(w, `{"name":"`+p.Name+`","tag":"`+p.Tag+`"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestLoadPostsDistinctValidCreatesAndMeasuresThem(t *testing.T) {
	for _, tc := range []struct {
		name       string
		chunked    bool
		closeAfter int
	}{
		{"content length", false, 0},
		{"chunked", true, 0},
		{"server closes connections", false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := plantsServer(t, tc.chunked, tc.closeAfter)
			addr := strings.TrimPrefix(srv.URL, "http://")
			s, err := runLoad(context.Background(), addr, "tok", 4, 50*time.Millisecond, 200*time.Millisecond)
			if err != nil {
				t.Fatalf("runLoad: %v", err)
			}
			if s.completed == 0 {
				t.Fatal("no request completed in the window")
			}
			if s.failed != 0 {
				t.Errorf("%d of %d requests failed; the server refused a request or an id was reused", s.failed, s.completed)
			}
			if len(s.latencies) != s.completed {
				t.Errorf("%d latencies for %d requests", len(s.latencies), s.completed)
			}
			n := 0
			seen.Range(func(any, any) bool { n++; return true })
			if n < s.completed {
				t.Errorf("server stored %d plants, fewer than the %d requests counted", n, s.completed)
			}
		})
	}
}

func TestLoadCountsNon2xxAsFailed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":50301,"message":"store unavailable"}`)
	}))
	defer srv.Close()
	s, err := runLoad(context.Background(), strings.TrimPrefix(srv.URL, "http://"), "tok", 2, 0, 100*time.Millisecond)
	if err != nil {
		t.Fatalf("runLoad: %v", err)
	}
	if s.completed == 0 || s.failed != s.completed {
		t.Errorf("failed %d of %d, want every request failed", s.failed, s.completed)
	}
}
