package sqlite

import (
	"cmp"
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// beforeItems is the last migration before plants and events kept their
// items.
const beforeItems = 20261126000000

// oddPlants are plants whose JSON needs escaping, or looks as if it did.
func oddPlants(t *testing.T) []domain.Plant {
	t.Helper()
	return []domain.Plant{
		mustPlant(t, 1, "Fern", nil),
		mustPlant(t, -2, `Say "hi" \ back\slash / slash`, ptr(`"\{NULL},`)),
		mustPlant(t, math.MinInt64, "Café é 🌵 e\u0301", ptr("Ünïcödé")),
		mustPlant(t, math.MaxInt64, "\u2028\u2029 <&> 'x'); DROP TABLE plants; --", nil),
		mustPlant(t, 5, "C1 \u0080\u0085\u009f, BOM \ufeff, \ufffd\uffff, nbsp\u00a0", ptr("x\u3000y")),
		mustPlant(t, 6, strings.Repeat("🌵", domain.MaxNameLength), ptr(strings.Repeat("t", domain.MaxTagLength))),
		mustPlant(t, 7, "  spaced  ", ptr(" t ")),
	}
}

// The migration that gives events their item renders the events already
// stored exactly as the service renders their plants, and keeps the rest
// of each event; plants stored before are rendered when read. An event the
// previous release's binary writes afterwards, with name and tag and no
// item, is rendered when read too. Going down and up again keeps them all.
func TestMigrationRendersStoredEventsAsTheServiceDoes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "plants.db"), Receivers: []string{"http://a.example/hook"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	p, err := s.migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, beforeItems); err != nil {
		t.Fatal(err)
	}
	plants := oddPlants(t)
	const at = "2026-11-20T10:00:00.000000000Z"
	// previousEvent stores the event of pl as the previous release's
	// binary does.
	previousEvent := func(id string, pl domain.Plant, attempts int, failedAt, traceParent any) {
		t.Helper()
		f := pl.Fields()
		if _, err := s.write.Exec(`INSERT INTO webhook_events (id, url, plant_id, name, tag, created_at, retry_from, attempts, next_at, last_error, failed_at, trace_parent)
			VALUES (?, 'http://a.example/hook', ?, ?, ?, ?, ?, ?, ?, 'gone', ?, ?)`,
			id, f.ID, f.Name, f.Tag, at, at, attempts, at, failedAt, traceParent); err != nil {
			t.Fatal(err)
		}
	}
	for i, pl := range plants {
		f := pl.Fields()
		if _, err := s.write.Exec(`INSERT INTO plants (id, name, tag, created_by, created_at) VALUES (?, ?, ?, 'old', ?)`,
			f.ID, f.Name, f.Tag, at); err != nil {
			t.Fatal(err)
		}
		var failedAt, traceParent any
		if i%2 == 1 {
			failedAt = at
		}
		if i%3 == 0 {
			traceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		}
		previousEvent("msg_"+string(rune('a'+i)), pl, i, failedAt, traceParent)
	}

	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	newer := mustPlant(t, 100, "Newer", ptr("new"))
	if _, _, err := s.InsertIfAbsent(ctx, recordOf(newer)); err != nil {
		t.Fatal(err)
	}
	previousEvent("msg_previous", plants[1], 0, nil, nil)
	checkEvents := func(when string) {
		t.Helper()
		byID := map[string]application.EventStatus{}
		for _, failed := range []bool{false, true} {
			events, err := s.ListEvents(ctx, failed, 100)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			for _, e := range events {
				byID[e.ID] = e
			}
		}
		if len(byID) != len(plants)+2 {
			t.Fatalf("%s: %d events, want %d", when, len(byID), len(plants)+2)
		}
		for i, pl := range plants {
			e := byID["msg_"+string(rune('a'+i))]
			if want := plantjson.AppendItem(nil, pl); string(e.Item) != string(want) {
				t.Errorf("%s: event %s has item %s, want %s", when, e.ID, e.Item, want)
			}
			if e.PlantID != pl.ID() || e.Attempts != i || e.Failed != (i%2 == 1) || e.LastError != "gone" ||
				(e.TraceParent != "") != (i%3 == 0) || e.CreatedAt.IsZero() || !e.RetryFrom.Equal(e.CreatedAt) {
				t.Errorf("%s: event %+v, want the one of plant %d kept", when, e, i)
			}
		}
		if e, want := byID["msg_previous"], plantjson.AppendItem(nil, plants[1]); string(e.Item) != string(want) {
			t.Errorf("%s: the previous binary's event has item %s, want %s", when, e.Item, want)
		}
		for _, e := range byID {
			if e.PlantID == newer.ID() && string(e.Item) != string(plantjson.AppendItem(nil, newer)) {
				t.Errorf("%s: the service's event has item %s", when, e.Item)
			}
		}
	}
	checkEvents("after the migration")
	sorted := append(slices.Clone(plants), newer)
	slices.SortFunc(sorted, func(a, b domain.Plant) int { return cmp.Compare(a.ID(), b.ID()) })
	expectPage(t, s, application.ListQuery{Limit: 100}, sorted, false)

	if _, err := p.DownTo(ctx, beforeItems); err != nil {
		t.Fatalf("down: %v", err)
	}
	var names []string
	if err := s.write.Select(&names, `SELECT name FROM webhook_events WHERE plant_id = ? OR id = 'msg_previous' ORDER BY id`, newer.ID()); err != nil {
		t.Fatalf("the events' names after going down: %v", err)
	}
	if want := []string{"Newer", plants[1].Name().String()}; !slices.Equal(names, want) {
		t.Errorf("names after going down: %q, want %q", names, want)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
	checkEvents("down and up again")
}
