package postgres

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// writeKind says how one kind of write takes part in a batch. A segment of a
// batch runs as one statement, and so one commit, built from the fragments
// of the kinds it holds: each kind adds its common table expressions and
// one SELECT of answer rows, joined to the others' by UNION ALL. Adding a
// kind of write is adding one kind value; the batching, the segments, the
// id order, the retries and the re-read stay as they are.
//
// Every answer row is an answerRow: the write's id, the row of plants stored
// under it or NULLs, and a flag whose meaning is the kind's own, its
// columns named as the row's (rowColumns); ids are distinct within one
// statement (see segments), so a row goes back to its write by id. The
// fragments number their parameters from $1; they are renumbered when
// composed. Their CTE names must differ from every other kind's.
//
// Every statement begins with the CTE locks (lockPlants), and every CTE
// of a kind that changes a row depends on it (a condition on
// (SELECT n FROM locks), which PostgreSQL evaluates once, before the first
// row), so that the statement holds the lock of each of its plants before
// it changes any row. A kind that writes a plant writes its event in the
// same statement (plant_events, see feed.go), and with the event payload
// the statement announces those events to every receiver (envelopes).
type writeKind struct {
	// name labels the kind in logs and errors.
	name string
	// bit names the kind in a set of kinds, and orders its fragments in a
	// statement: each kind has its own power of two.
	bit uint
	// ctes is the kind's common table expressions, without WITH.
	ctes string
	// answers is the kind's SELECT of answer rows.
	answers string
	// args returns the parameters of the fragments for ws, the writes of
	// this kind in a segment, in id order.
	args func(s *Store, ws []write) []any
	// events names the kind's CTE of the events it stores (storedEvents),
	// whose columns are eventColumns: the statement stores them with every
	// other kind's (eventsRow) and, with the event payload, announces them
	// (envelopes).
	events string
	// assumed is the answer of a write the statement returned no row for.
	assumed func(w write) result
	// read turns the answer row of w into its answer; missing says that the
	// statement's snapshot did not show w's row as it is, since a concurrent
	// transaction committed it meanwhile: the row is read back with a fresh
	// snapshot and read called again with flag false, and a write whose row
	// is still missing then is run again (at most maxAttempts in all).
	read func(s *Store, w write, row answerRow) (res result, missing bool)
	// shares says whether later writes of an id in one segment may share
	// the first one's row: they then answer as if they ran right after it,
	// with the flags of outcome clear. A kind that cannot share (whose
	// second write depends on the first) gets a segment cut instead.
	shares bool
	// locks says that the kind writes rows that exist, and so waits for
	// their locks. The parts of one statement run in no set order, so a
	// segment holds writes of one such kind only: each kind takes its
	// rows' locks in id order, and so every batch does (see byID).
	locks bool
}

// answerRow is one row a batch statement answers.
type answerRow struct {
	plantRow
	Flag bool `db:"flag"`
}

// placeholder matches a parameter of a fragment.
var placeholder = regexp.MustCompile(`\$[0-9]+`)

// composed caches the statement of each set of kinds, by kinds' bits.
var composed sync.Map // uint to string

// lockPlants takes the transaction-level advisory lock of every plant of
// a statement, given in ascending id order as $1, before any row change.
//
// Why: the event feed is in the order of the writing transactions' ids
// (feed.go), and a transaction gets its id at its first row change. A
// statement that changed one row, got its id, and then waited for the row
// lock of a plant that a transaction with a later id held, would write that
// plant after it but sort its event before it. Holding every plant's lock
// first, the statement waits, if at all, before it has an id: a later
// writer of a plant gets its id only after the earlier one committed, so
// each plant's events are in the order of its writes. All statements take
// these locks in id order, all at once, then their row locks in id order
// (byID): no two wait for each other in a circle. The key space is the
// plant ids, in the single-bigint form of the advisory locks; another user
// of that form, on the same database, could only make a write wait.
// Writes that are about no plant (the outbox's) take none.
const lockPlants = `locks AS (
    SELECT count(*) AS n FROM (SELECT pg_advisory_xact_lock(id) FROM unnest($1::bigint[]) AS id) AS l
)`

// eventColumns are the columns of a kind's events CTE (storedEvents): what
// an envelope keeps of each event.
const eventColumns = "number, type, plant_id, item"

// storedEvents returns the CTE name, which numbers the events source
// yields, a SELECT of their type, plant_id and item in the order of the
// writes, in that order (an ordered subquery is kept whole, so the numbers
// are drawn as its rows come), and has eventColumns. The statement stores
// the events of all its kinds together (eventsRow), and, with the event
// payload, announces them (envelopes).
func storedEvents(name, source string) string {
	return name + ` AS (
    SELECT nextval('plant_events_number_seq') AS number, s.type, s.plant_id, s.item
    FROM (` + source + `) AS s
)`
}

// eventsRow stores the events of a statement's kinds (their events CTEs,
// each with eventColumns, joined as %s) as one row of plant_events: their
// feed lines (plant_event_line, which holds each one's type and item, the
// one copy of them the event keeps) in the order of their numbers, their
// count, and the last number, which keys the row. A line of a type that is
// not an event's is NULL, and makes lines NULL, which NOT NULL refuses. A
// statement that stored no event writes none. Numbers are drawn while the
// statement runs, so the rows of one transaction hold ranges of numbers in
// the order of its statements, and the key orders every event as the feed
// does (feed.go).
const eventsRow = `events_row AS (
    INSERT INTO plant_events (number, lines, count)
    SELECT max(e.number), CASE WHEN count(e.line) = count(*) THEN string_agg(e.line, E'\n' ORDER BY e.number) END, count(*)
    FROM (SELECT k.number, plant_event_line(k.number, k.type, k.item) AS line FROM (%s) AS k) AS e
    HAVING count(*) > 0
)`

// envelopes announces, with the event payload, the events that the
// statement's kinds stored (their events CTEs, each with eventColumns, joined
// as %[1]s) to every receiver of %[2]s, a text[], by one packed row per
// receiver, as createKind's announced does with the plant payload. Each
// event keeps its type, its number, its plant and the plant's item; the
// row's created_at is the transaction's time, the events' own (plant_events'
// default). Its deliveries' ids are made from the row's (envelopeID). The
// events are aggregated once, into parallel arrays (one aggregate reads the
// rows once, in one order), which every receiver's row shares; a statement
// that stored no event writes none.
const envelopes = `envelopes AS (
    INSERT INTO webhook_envelope_batches (url, created_at, types, numbers, plant_ids, items, trace_parents)
    SELECT r.url, now(), a.types, a.numbers, a.plant_ids, a.items, a.trace_parents
    FROM (
        SELECT array_agg(e.type) AS types, array_agg(e.number) AS numbers, array_agg(e.plant_id) AS plant_ids,
               array_agg(e.item) AS items, %[3]s AS trace_parents
        FROM (%[1]s) AS e%[4]s
    ) AS a
    CROSS JOIN unnest(%[2]s::text[]) AS r (url)
    WHERE a.numbers IS NOT NULL
)`

// tracedEnvelopes are the parts of envelopes that keep, with each event, the
// traceparent of its write, when a write of the statement is traced: %[1]s
// holds them, NULL for an untraced write, in the order of the plant ids of
// $1 (each id is written once in a statement). A statement of untraced
// writes (every one, with tracing off) neither takes nor joins them.
const (
	tracedParents = `array_agg(t.trace_parent)`
	tracedJoin    = `
        LEFT JOIN unnest($1::bigint[], %[1]s::text[]) AS t (plant_id, trace_parent) USING (plant_id)`
	untracedParents = `NULL::text[]`
)

// announcement says whether a statement announces its events (the event
// payload), and whether it keeps traceparents with them.
type announcement uint

const (
	silent announcement = iota
	untraced
	traced
)

// batchStatement returns the statement that applies the writes of kinds,
// given in the order of their bits, whose bits make set. Its $1 is the ids
// of lockPlants; the kinds' parameters follow, and, when it announces, the
// receivers of envelopes, then, when traced, the traceparents.
func batchStatement(set uint, kinds []*writeKind, announce announcement) string {
	key := set | uint(announce)<<announcing
	if text, ok := composed.Load(key); ok {
		return text.(string)
	}
	ctes, answers := []string{lockPlants}, []string(nil)
	params := 1
	for _, k := range kinds {
		base, most := params, 0
		renumber := func(fragment string) string {
			return placeholder.ReplaceAllStringFunc(fragment, func(p string) string {
				n, _ := strconv.Atoi(p[1:])
				most = max(most, n)
				return "$" + strconv.Itoa(base+n)
			})
		}
		ctes = append(ctes, renumber(k.ctes))
		answers = append(answers, renumber(k.answers))
		params += most
	}
	var stored []string
	for _, k := range kinds {
		if k.events != "" {
			stored = append(stored, "SELECT "+eventColumns+" FROM "+k.events)
		}
	}
	if stored != nil {
		ctes = append(ctes, fmt.Sprintf(eventsRow, strings.Join(stored, " UNION ALL ")))
	}
	if announce != silent {
		parents, join := untracedParents, ""
		if announce == traced {
			parents, join = tracedParents, fmt.Sprintf(tracedJoin, "$"+strconv.Itoa(params+2))
		}
		ctes = append(ctes, fmt.Sprintf(envelopes, strings.Join(stored, " UNION ALL "),
			"$"+strconv.Itoa(params+1), parents, join))
	}
	text := "WITH " + strings.Join(ctes, ",\n") + "\n" + strings.Join(answers, "\nUNION ALL\n")
	composed.Store(key, text)
	return text
}

// announcing places, in composed's keys, a statement's announcement above
// every kind's bit.
const announcing = 16
