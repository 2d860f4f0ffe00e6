package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/postgres"
	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/adapters/sqlite"
)

func TestDeleteRangeIsConsumedOnceAndToppedUp(t *testing.T) {
	r := newIDRange(deleteRanges)
	from, to := r.topUp(2 * time.Second)
	if from != deleteRanges || to != deleteRanges+2*deleteRateBound {
		t.Fatalf("first top-up [%d, %d), want %d ids from %d", from, to, 2*deleteRateBound, deleteRanges)
	}
	r.loaded, r.start = to, r.next.Load()
	seen := sync.Map{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25_000 {
				if _, dup := seen.LoadOrStore(r.take(), true); dup {
					t.Error("an id was taken twice")
					return
				}
			}
		})
	}
	wg.Wait()
	if err := r.check(); err != nil {
		t.Fatal(err)
	}
	// The run took all 200000: the next one gets twice that.
	if from, to := r.topUp(time.Second); from != r.loaded || to != r.next.Load()+2*200_000 {
		t.Errorf("top-up [%d, %d), want twice the last run's 200000 ids ahead of %d", from, to, r.next.Load())
	}
	r.take()
	if err := r.check(); err == nil || !strings.Contains(err.Error(), "ran out") {
		t.Errorf("check past the loaded ids: %v", err)
	}
}

func TestScenarioIDsHitThePreloadedPlants(t *testing.T) {
	const rows = 1000
	for _, sc := range scenarios {
		if sc.id == nil {
			continue // deliver: no requests
		}
		for range 10_000 {
			id := sc.id(rows, newIDRange(deleteRanges))
			switch sc.name {
			case "create", "create+hook", "lag":
				if id < freshIDs {
					t.Fatalf("create id %d among the stored ones", id)
				}
			case "get", "get-not-modified", "change":
				if id < 1 || id > rows {
					t.Fatalf("get id %d not stored", id)
				}
			case "list", "list-tag":
				if id < 0 || id+listLimit > rows {
					t.Fatalf("list after %d gives a page short of %d", id, listLimit)
				}
			}
		}
	}
}

// list-tag's references read full pages of the tagged plants the preload
// stores, after the id drawn: pgbench's query on PostgreSQL, and the Go
// loop's on the embedded store through the tag's index, as the store does.
func TestListTagReferencesReadFullTaggedPages(t *testing.T) {
	ctx := context.Background()
	sc := scenarioNamed("list-tag")
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			var (
				adapter interface {
					Migrate(context.Context) error
					Close() error
				}
				s   *store
				err error
			)
			query := sc.sql
			if kind == "sqlite" {
				dir := t.TempDir()
				adapter, err = sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "plants.db")})
				if err == nil {
					s, err = openSQLite(dir, "plants.db")
				}
			} else {
				u := pgtest.NewDatabase(t)
				adapter, err = postgres.Open(ctx, postgres.Config{URL: u})
				s = &store{kind: kind, url: u}
				if err == nil {
					s.db, err = sql.Open("postgres", u)
				}
				// The script's query, its variable a parameter.
				_, query, _ = strings.Cut(sc.pgbench, "\n")
				query = strings.ReplaceAll(strings.TrimSuffix(strings.TrimSpace(query), ";"), ":after", "$1")
			}
			if err != nil {
				t.Fatal(err)
			}
			defer adapter.Close()
			defer s.db.Close()
			if err = adapter.Migrate(ctx); err == nil {
				err = s.load(ctx, 1, 1001)
			}
			if err != nil {
				t.Fatal(err)
			}
			if kind == "sqlite" {
				var plan strings.Builder
				rows, err := s.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, 0)
				for err == nil && rows.Next() {
					var id, parent, unused int
					var detail string
					err = rows.Scan(&id, &parent, &unused, &detail)
					plan.WriteString(detail)
				}
				if err != nil || !strings.Contains(plan.String(), "plants_tag_id") {
					t.Errorf("plan %q, %v; want the tag's index", plan.String(), err)
				}
			}
			var n, first, last int64
			err = s.db.QueryRowContext(ctx, "SELECT count(*), min(id), max(id) FROM ("+query+") AS page", 900).Scan(&n, &first, &last)
			if err != nil || n != listLimit || first != 901 || last != 1000 {
				t.Errorf("page after 900: %d plants %d…%d, %v; want %d, 901…1000", n, first, last, err, listLimit)
			}
			if path, _ := sc.request(900); path != "/plants?limit=100&tag=indoor&after=900" {
				t.Errorf("request %s", path)
			}
		})
	}
}
