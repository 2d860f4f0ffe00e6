package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"
)

const (
	// listLimit is the page size of the list scenarios.
	listLimit = 100
	// listTag is the tag of list-tag's pages: the tag of every preloaded
	// plant (store.load).
	listTag = "indoor"
	// freshIDs is where the ids of creates start: far above the preloaded
	// plants and the delete ranges, so that a create never meets a stored id
	// (random ids in 2^62 of them practically never collide either).
	freshIDs = 1 << 62
	// deleteRanges spaces the id ranges of the delete cells: cell k deletes
	// ids from (k+1)·deleteRanges up, far above the preloaded plants.
	deleteRanges = 1 << 40
	// deleteRateBound is the delete rate a range is first sized for; later
	// runs size it from what the cell's previous run consumed.
	deleteRateBound = 100_000
)

// scenario is one operation, measured three ways: through the service over
// HTTP, by pgbench on PostgreSQL and by a plain Go loop on the embedded store.
// A new scenario is one more value in scenarios.
type scenario struct {
	name  string
	conns int // HTTP connections when -conns is not given
	// id draws the id of one operation; rows is the number of preloaded
	// plants (ids 1..rows), r the cell's own range when consumes is set.
	id       func(rows int64, r *idRange) int64
	consumes bool
	method   string
	request  func(id int64) (path string, body []byte)
	// header holds the request's headers besides the token and the JSON
	// content type; lua must send them too.
	header map[string]string
	// lua is the body of wrk's request(): the same request in Lua, with
	// rows the preloaded plants and take() the next id of the cell's range.
	lua string
	// pgbench is one transaction of the reference, run with -D rows=N.
	pgbench string
	// sql is the loop's statement, ? standing for the id; a write runs in a
	// transaction of its own and must change exactly one row.
	sql   string
	write bool
	// hook: the service announces every plant to the one receiver this
	// tool runs (PLANTSTORE_WEBHOOK_URLS), which counts what it gets.
	hook bool
	// refOp names another scenario whose references this one is compared
	// with, for the same SQL.
	refOp string
	// measure replaces the HTTP load of the service's cells (lag, deliver),
	// which then have no reference.
	measure func(b *bench, ctx context.Context, c *cell, svc *service) (*sample, error)
	// feed: the scenario reads the event feed, which the run preloads
	// (store.loadEvents). Each request draws its cursor from a walk of the
	// feed through the service (bench.feedCursors, store.cursors: cursors in
	// lua, and in the open loop's targeter), instead of from id.
	feed bool
}

// refName is the scenario whose references the ratio is taken against; ""
// for none.
func (sc scenario) refName() string {
	switch {
	case sc.measure != nil:
		return ""
	case sc.refOp != "":
		return sc.refOp
	}
	return sc.name
}

var scenarios = withWebhook([]scenario{{
	name: "create", conns: 64, method: "POST",
	id: func(int64, *idRange) int64 { return freshIDs + rand.Int64N(math.MaxInt64-freshIDs) },
	request: func(id int64) (string, []byte) {
		return "/plants", fmt.Appendf(nil, `{"id":%d,"name":"Monstera deliciosa","tag":"indoor"}`, id)
	},
	pgbench: `\set id random(4611686018427387904, 9223372036854775806)
INSERT INTO plants (id, name, tag, created_by, created_at) VALUES (:id, 'Monstera deliciosa', 'indoor', 'bench', now()) ON CONFLICT (id) DO NOTHING;
`,
	// 5 and 18 random digits: an id from 5·10^18 up, above 2^62.
	lua: `  local id = "5" .. string.format("%09d%09d", math.random(0, 999999999), math.random(0, 999999999))
  return wrk.format("POST", "/plants", nil, '{"id":' .. id .. ',"name":"Monstera deliciosa","tag":"indoor"}')`,
	sql: `INSERT INTO plants (id, name, tag, created_by, created_at)
VALUES (?, 'Monstera deliciosa', 'indoor', 'bench', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT (id) DO NOTHING`,
	write: true,
}, {
	name: "get", conns: 64, method: "GET",
	id:      func(rows int64, _ *idRange) int64 { return 1 + rand.Int64N(rows) },
	request: func(id int64) (string, []byte) { return fmt.Sprintf("/plants/%d", id), nil },
	lua:     `  return wrk.format("GET", "/plants/" .. math.random(1, rows))`,
	pgbench: `\set id random(1, :rows)
SELECT name, tag FROM plants WHERE id = :id;
`,
	sql: `SELECT name, tag FROM plants WHERE id = ?`,
}, {
	// A read the client holds already: If-None-Match matches the stored
	// plant, so the answer is 304 without a body. "*" matches every stored
	// plant as its own ETag would, so that the load computes no tags; the
	// service reads the plant and hashes its JSON all the same. Against the
	// reference of get, so that the two rows compare.
	name: "get-not-modified", conns: 64, method: "GET", refOp: "get",
	id:      func(rows int64, _ *idRange) int64 { return 1 + rand.Int64N(rows) },
	request: func(id int64) (string, []byte) { return fmt.Sprintf("/plants/%d", id), nil },
	header:  map[string]string{"If-None-Match": "*"},
	lua: `  if not inm then
    inm = {}
    for k, v in pairs(wrk.headers) do inm[k] = v end
    inm["If-None-Match"] = "*"
  end
  return wrk.format("GET", "/plants/" .. math.random(1, rows), inm)`,
}, {
	// The HTTP path of a read without the store: the same route, token,
	// routing, error body and access line, refused with 400 before the store
	// is asked. Every answer is a non-2xx by design; the row bounds what any
	// read can reach, against the same reference as get.
	name: "get-refused", conns: 64, method: "GET", refOp: "get",
	id:      func(int64, *idRange) int64 { return 0 },
	request: func(int64) (string, []byte) { return "/plants/x", nil },
	lua:     `  return wrk.format("GET", "/plants/x")`,
}, {
	// after is drawn so that every page is full: ids 1..rows are stored.
	name: "list", conns: 16, method: "GET",
	id: func(rows int64, _ *idRange) int64 { return rand.Int64N(rows - listLimit + 1) },
	request: func(after int64) (string, []byte) {
		return fmt.Sprintf("/plants?limit=%d&after=%d", listLimit, after), nil
	},
	lua: fmt.Sprintf(`  return wrk.format("GET", "/plants?limit=%[1]d&after=" .. math.random(0, rows - %[1]d))`, listLimit),
	pgbench: fmt.Sprintf(`\set after random(0, :rows - %[1]d)
SELECT id, name, tag FROM plants WHERE id > :after ORDER BY id LIMIT %[1]d;
`, listLimit),
	sql: fmt.Sprintf(`SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT %d`, listLimit),
}, {
	// A page of the event feed, as many events as list's pages have plants,
	// after a cursor drawn from a walk of the preloaded feed (whose events
	// keep the preloaded plants' items): every page is full. Against the
	// references of list, so that the two rows compare.
	name: "events", conns: 16, method: "GET", refOp: "list", feed: true,
	id: func(int64, *idRange) int64 { return 0 }, // unused: the load draws a cursor
	request: func(int64) (string, []byte) {
		return fmt.Sprintf("/events?limit=%d", listLimit), nil // the start of the feed; the load sends a cursor
	},
	lua: fmt.Sprintf(`  return wrk.format("GET", "/events?limit=%d&after=" .. cursors[math.random(1, #cursors)])`, listLimit),
}, {
	// A page of the plants with one tag, which every preloaded plant has:
	// the tag's index (plants_tag_id) instead of the primary key, the same
	// keyset shape as the store's tagged list. The peer and the floor do not
	// filter by tag, so it has no rows of theirs.
	name: "list-tag", conns: 16, method: "GET",
	id: func(rows int64, _ *idRange) int64 { return rand.Int64N(rows - listLimit + 1) },
	request: func(after int64) (string, []byte) {
		return fmt.Sprintf("/plants?limit=%d&tag=%s&after=%d", listLimit, listTag, after), nil
	},
	lua: fmt.Sprintf(`  return wrk.format("GET", "/plants?limit=%[1]d&tag=%[2]s&after=" .. math.random(0, rows - %[1]d))`, listLimit, listTag),
	pgbench: fmt.Sprintf(`\set after random(0, :rows - %[1]d)
SELECT id, name, tag FROM plants WHERE tag = '%[2]s' AND id > :after ORDER BY id LIMIT %[1]d;
`, listLimit, listTag),
	sql: fmt.Sprintf(`SELECT id, name, tag FROM plants WHERE tag = '%s' AND id > ? ORDER BY id LIMIT %d`, listTag, listLimit),
}, {
	// A change of a stored plant's name. The name is one of two, drawn at
	// random, so that most changes write a new value; the references run
	// the same single-row UPDATE.
	name: "change", conns: 64, method: "PATCH",
	id: func(rows int64, _ *idRange) int64 { return 1 + rand.Int64N(rows) },
	request: func(id int64) (string, []byte) {
		return fmt.Sprintf("/plants/%d", id), fmt.Appendf(nil, `{"name":%q}`, changeNames[rand.IntN(2)])
	},
	lua: `  local names = {'{"name":"Monstera adansonii"}', '{"name":"Monstera deliciosa"}'}
  return wrk.format("PATCH", "/plants/" .. math.random(1, rows), nil, names[math.random(1, 2)])`,
	pgbench: `\set id random(1, :rows)
\set n random(0, 1)
UPDATE plants SET name = CASE WHEN :n = 0 THEN 'Monstera adansonii' ELSE 'Monstera deliciosa' END WHERE id = :id;
`,
	sql:   `UPDATE plants SET name = CASE abs(random()) % 2 WHEN 0 THEN 'Monstera adansonii' ELSE 'Monstera deliciosa' END WHERE id = ?`,
	write: true,
}, {
	// A DELETE that matches nothing commits without flushing the WAL, so
	// every delete must hit a stored row: each cell consumes a preloaded range
	// of its own, each id once. The HTTP load and the loop take ids from the
	// range's atomic counter. pgbench takes them from a sequence set to the
	// range's next id before the run and read back after it; nextval sits in
	// an uncorrelated subquery, evaluated once per statement, so that a delete
	// stays one statement, one round trip and one commit.
	name: "delete", conns: 64, method: "DELETE", consumes: true,
	id:      func(_ int64, r *idRange) int64 { return r.take() },
	request: func(id int64) (string, []byte) { return fmt.Sprintf("/plants/%d", id), nil },
	lua:     `  return wrk.format("DELETE", "/plants/" .. take())`,
	pgbench: `DELETE FROM plants WHERE id = (SELECT nextval('bench_delete'));
`,
	sql:   `DELETE FROM plants WHERE id = ?`,
	write: true,
}})

// changeNames are the names the change scenario sets.
var changeNames = [2]string{"Monstera adansonii", "Monstera deliciosa"}

// scenarioNamed returns the scenario of that name.
func scenarioNamed(name string) scenario {
	return scenarios[slices.IndexFunc(scenarios, func(sc scenario) bool { return sc.name == name })]
}

func scenarioNames() []string {
	names := make([]string, len(scenarios))
	for i, sc := range scenarios {
		names[i] = sc.name
	}
	return names
}

// idRange is the ids one delete cell consumes: those from next up to loaded
// are stored and not yet deleted.
type idRange struct {
	next   atomic.Int64
	loaded int64
	start  int64 // next when the cell's last run started
}

func newIDRange(first int64) *idRange {
	r := &idRange{loaded: first, start: first}
	r.next.Store(first)
	return r
}

func (r *idRange) take() int64 { return r.next.Add(1) - 1 }

// topUp returns the ids [from, to) to store before a run of length window,
// so that twice what the previous run consumed, and at least what
// deleteRateBound would consume, remain.
func (r *idRange) topUp(window time.Duration) (from, to int64) {
	next := r.next.Load()
	need := max(2*(next-r.start), int64(deleteRateBound*window.Seconds()))
	return r.loaded, max(r.loaded, next+need)
}

// check fails when the last run deleted ids that were never stored.
func (r *idRange) check() error {
	if next := r.next.Load(); next > r.loaded {
		return fmt.Errorf("the delete range ran out after %d ids", next-r.start)
	}
	return nil
}
