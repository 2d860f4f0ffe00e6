package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/plantstore/plantstore/adapters/postgres"
	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
	"github.com/plantstore/plantstore/adapters/sqlite"
	"github.com/plantstore/plantstore/application"
)

// outbox is what the test needs of a store adapter: its schema, and the
// dispatcher's view of the events.
type outbox interface {
	Migrate(ctx context.Context) error
	ClaimDue(ctx context.Context, url string, now time.Time, lease time.Duration, limit int) ([]application.Event, error)
	Close() error
}

// The filled events are due at once in the store's own eyes: the store
// adapter the service runs claims every one of them, for the receiver, with
// ids and plants 1 … n; and clearing leaves none.
func TestFillOutboxMakesDueEventsForEachStore(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			var (
				adapter outbox
				err     error
				s       *store
			)
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
			}
			if err != nil {
				t.Fatal(err)
			}
			defer adapter.Close()
			defer s.db.Close()
			if err := adapter.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			const n, url = 250, "http://127.0.0.1:1/hook"
			if err := s.fillOutbox(ctx, url, n); err != nil {
				t.Fatal(err)
			}
			events, err := adapter.ClaimDue(ctx, url, time.Now().Add(time.Second), time.Minute, n+1)
			if err != nil {
				t.Fatal(err)
			}
			var ids, plants []string
			for _, e := range events {
				ids, plants = append(ids, e.ID), append(plants, fmt.Sprint(e.PlantID))
				if want := fmt.Sprintf(`{"id":%d,"name":"Monstera deliciosa","tag":"indoor"}`, e.PlantID); e.URL != url || string(e.Item) != want || time.Since(e.CreatedAt) > time.Minute {
					t.Fatalf("event %s: url %s, plant %s, created %v", e.ID, e.URL, e.Item, e.CreatedAt)
				}
			}
			slices.Sort(ids)
			slices.Sort(plants)
			if len(events) != n || ids[0] != "msg_1" || !slices.Contains(ids, fmt.Sprint("msg_", n)) ||
				plants[0] != "1" || !slices.Contains(plants, fmt.Sprint(n)) {
				t.Errorf("claimed %d events, ids %s … %s; want %d, msg_1 … msg_%d about plants 1 … %d", len(events), ids[0], ids[len(ids)-1], n, n, n)
			}
			for range 2 { // the second time with the events left as filled
				if err := s.clearOutbox(ctx); err != nil {
					t.Fatal(err)
				}
				if err := s.fillOutbox(ctx, url, n); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.clearOutbox(ctx); err != nil {
				t.Fatal(err)
			}
			if again, err := adapter.ClaimDue(ctx, url, time.Now().Add(time.Second), time.Minute, n+1); len(again) != 0 || err != nil {
				t.Errorf("after clearing claimed %d events, %v", len(again), err)
			}
			var left int
			if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM webhook_events").Scan(&left); err != nil || left != 0 {
				t.Errorf("after clearing: %d events, %v", left, err)
			}
		})
	}
}
