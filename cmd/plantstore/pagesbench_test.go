package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// BenchmarkPages reads pages of 100 plants and pages of 100 events through
// the whole wired service on PostgreSQL, from 16 clients at once, as the
// end-to-end load's list and events cells do: a list page after a random
// id, a feed page after a random cursor of a walk of the feed. Run it with
// -cpuprofile to see what a page of each costs the service.
func BenchmarkPages(b *testing.B) {
	const stored = 50_000
	s, db, client, auth := benchService(b, stored, 16)
	preloadEvents(b, db, stored)
	get := func(path string) (body []byte, link string, err error) {
		req, err := http.NewRequest(http.MethodGet, s.api+path, nil)
		if err != nil {
			return nil, "", err
		}
		req.Header.Set("Authorization", auth)
		resp, err := client.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		if body, err = io.ReadAll(resp.Body); err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %d %.200s", path, resp.StatusCode, body)
		}
		return body, resp.Header.Get("Link"), err
	}
	var cursors []string // the Links of a walk of the feed, but the last
	for path, deadline := "/events?limit=100", time.Now().Add(time.Minute); ; {
		body, link, err := get(path)
		if err != nil {
			b.Fatal(err)
		}
		if strings.Count(string(body), `"plant":`) == 100 {
			cursors = append(cursors, path)
			path = strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
			continue
		}
		if len(cursors) >= stored/100-1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // behind the horizon, which other work may hold
	}
	if len(cursors) == 0 {
		b.Fatal("the event feed has no full page")
	}
	pages := func(b *testing.B, next func(r *rand.Rand) string) {
		b.ReportAllocs()
		b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
			for pb.Next() {
				if _, _, err := get(next(r)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("list", func(b *testing.B) {
		pages(b, func(r *rand.Rand) string {
			return "/plants?limit=100&after=" + strconv.FormatInt(r.Int64N(stored-200), 10)
		})
	})
	b.Run("events", func(b *testing.B) {
		pages(b, func(r *rand.Rand) string { return cursors[r.IntN(len(cursors))] })
	})
}

// preloadEvents stores one plant.created event for each of the plants
// 1..n, with its item, in one transaction, 16 events a row, as the
// end-to-end load's preload does.
func preloadEvents(b *testing.B, db *sqlx.DB, n int64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, `INSERT INTO plant_events (number, lines, count)
SELECT max(e.number), string_agg(plant_event_line(e.number, 'plant.created', e.item), E'\n' ORDER BY e.number), count(*)
FROM (SELECT nextval('plant_events_number_seq') AS number, id, item
      FROM (SELECT id, item FROM plants WHERE id BETWEEN 1 AND $1 ORDER BY id) AS p) AS e
GROUP BY (e.id - 1) / 16`, n); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE plant_events"); err != nil {
		b.Fatal(err)
	}
}
