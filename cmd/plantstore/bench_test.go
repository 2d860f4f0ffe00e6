package main

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// BenchmarkWrites sends creates, changes and deletes through the whole
// wired service on PostgreSQL, from 64 clients at once over keep-alive
// connections, as the end-to-end load does (docs/performance.md): the
// connection cap, the request deadline, the token, the access log, the
// store's batches, its sessions and rows all count. Run it with
// -cpuprofile to see what each costs the service. Its allocations include
// the Go client's, which are the same for every build of the service.
func BenchmarkWrites(b *testing.B) {
	const stored = 100_000 // plants 1..stored, which changes pick from
	s, db, client, auth := benchService(b, stored, 64)

	// send runs requests from 64 goroutines, each request made by next
	// with the goroutine's random source, and wants status for every one.
	send := func(b *testing.B, status int, next func(r *rand.Rand) (method, path, body string)) {
		b.ReportAllocs()
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		writes, batches := batchTotals(b, s)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
			for pb.Next() {
				method, path, body := next(r)
				req, err := http.NewRequest(method, s.api+path, bytes.NewReader([]byte(body)))
				if err != nil {
					b.Error(err)
					return
				}
				req.Header.Set("Authorization", auth)
				if body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != status {
					b.Errorf("%s %s: status %d, want %d", method, path, resp.StatusCode, status)
					return
				}
			}
		})
		b.StopTimer()
		if w, n := batchTotals(b, s); n > batches {
			b.ReportMetric((w-writes)/(n-batches), "writes/batch")
		}
	}

	var created atomic.Int64
	b.Run("create", func(b *testing.B) {
		send(b, http.StatusOK, func(*rand.Rand) (string, string, string) {
			id := strconv.FormatInt(1<<62+created.Add(1), 10)
			return http.MethodPost, "/plants", `{"id":` + id + `,"name":"Monstera deliciosa","tag":"indoor"}`
		})
	})
	names := [2]string{`{"name":"Monstera deliciosa"}`, `{"name":"Monstera adansonii"}`}
	b.Run("change", func(b *testing.B) {
		send(b, http.StatusOK, func(r *rand.Rand) (string, string, string) {
			return http.MethodPatch, "/plants/" + strconv.FormatInt(1+r.Int64N(stored), 10), names[r.IntN(2)]
		})
	})
	var deleted atomic.Int64
	b.Run("delete", func(b *testing.B) {
		// Every delete removes a plant: one that finds none commits
		// nothing and would cost the store less.
		first := 2*stored + deleted.Load() + 1
		preloadPlants(b, db, first, first+int64(b.N)-1)
		deleted.Store(first - 1)
		send(b, http.StatusNoContent, func(*rand.Rand) (string, string, string) {
			return http.MethodDelete, "/plants/" + strconv.FormatInt(deleted.Add(1), 10), ""
		})
	})
}

// benchService starts the wired service on a new PostgreSQL database with
// plants 1..stored, and returns it, a connection to its database, a client
// of conns keep-alive connections and a token's Authorization value.
func benchService(b *testing.B, stored int64, conns int) (s *service, db *sqlx.DB, client *http.Client, auth string) {
	b.Helper()
	url := pgtest.NewDatabase(b)
	s = startService(b, url, nil)
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	preloadPlants(b, db, 1, stored)
	client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}}
	b.Cleanup(client.CloseIdleConnections)
	return s, db, client, "Bearer " + s.token(b, nil)
}

// preloadPlants stores plants from..to with the item the service renders
// for each, as the end-to-end load's preload does.
func preloadPlants(b *testing.B, db *sqlx.DB, from, to int64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, `INSERT INTO plants (id, name, tag, created_by, created_at, item)
SELECT id, 'Monstera deliciosa', 'indoor', 'preload', now(), '{"id":' || id || ',"name":"Monstera deliciosa","tag":"indoor"}'
FROM generate_series($1::bigint, $2::bigint) AS id`, from, to); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE plants"); err != nil {
		b.Fatal(err)
	}
}

// batchTotals reads the writes the store batched and its batches so far
// from the service's metrics.
func batchTotals(b *testing.B, s *service) (writes, batches float64) {
	b.Helper()
	resp, err := http.Get(s.admin + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(body)) {
		name, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		v, _ := strconv.ParseFloat(value, 64)
		switch {
		case strings.HasPrefix(name, "plantstore_store_batch_size_sum{"):
			writes = v
		case strings.HasPrefix(name, "plantstore_store_batch_size_count{"):
			batches = v
		}
	}
	return writes, batches
}
