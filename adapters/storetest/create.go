package storetest

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

func insertsANewPlant(t *testing.T, h Harness) {
	s := h.Open(t)
	p := plant(t, 1, "Monstera deliciosa", tag("indoor"))
	mustInsert(t, s, p)
}

func replaysTheSameContent(t *testing.T, h Harness) {
	s := h.Open(t)
	p := plant(t, 2, "Ficus lyrata", tag("tree"))
	mustInsert(t, s, p)
	again := plant(t, 2, "Ficus lyrata", tag("tree"))
	mustFind(t, s, again, p)
}

func keepsTheOriginalOnDifferentContent(t *testing.T, h Harness) {
	s := h.Open(t)
	tagged := plant(t, 3, "Aloe vera", tag("succulent"))
	untagged := plant(t, 4, "Aloe vera", nil)
	mustInsert(t, s, tagged)
	mustInsert(t, s, untagged)

	for _, c := range []struct {
		name     string
		original domain.Plant
		other    domain.Plant
	}{
		{"other name", tagged, plant(t, 3, "Aloe ferox", tag("succulent"))},
		{"other tag", tagged, plant(t, 3, "Aloe vera", tag("medicinal"))},
		{"no tag instead of a tag", tagged, plant(t, 3, "Aloe vera", nil)},
		{"a tag instead of none", untagged, plant(t, 4, "Aloe vera", tag("succulent"))},
		{"name differing in case only", tagged, plant(t, 3, "aloe vera", tag("succulent"))},
		{"tag with a trailing space", tagged, plant(t, 3, "Aloe vera", tag("succulent "))},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustFind(t, s, c.other, c.original)
		})
	}
	// The stored plants are still exactly the originals.
	mustFind(t, s, tagged, tagged)
	mustFind(t, s, untagged, untagged)
}

func acceptsEveryInt64ID(t *testing.T, h Harness) {
	s := h.Open(t)
	ids := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt32 + 1, math.MaxInt64 - 1, math.MaxInt64}
	for _, id := range ids {
		mustInsert(t, s, plant(t, id, "plant", nil))
	}
	// Each id kept its own plant: none was truncated onto another.
	for _, id := range ids {
		other := plant(t, id, "another plant", nil)
		mustFind(t, s, other, plant(t, id, "plant", nil))
	}
}

func roundTripsLimitLengths(t *testing.T, h Harness) {
	s := h.Open(t)
	longName := strings.Repeat("🌵", domain.MaxNameLength) // 800 bytes
	longTag := strings.Repeat("🌵", domain.MaxTagLength)
	asciiName := strings.Repeat("n", domain.MaxNameLength)
	asciiTag := strings.Repeat("t", domain.MaxTagLength)
	for i, p := range []domain.Plant{
		plant(t, 10, longName, tag(longTag)),
		plant(t, 11, asciiName, tag(asciiTag)),
		plant(t, 12, "x", tag("y")),
	} {
		mustInsert(t, s, p)
		mustFind(t, s, plant(t, int64(10+i), p.Name().String(), tag(p.Tag().String())), p)
	}
}

func roundTripsUnicodeByteForByte(t *testing.T, h Harness) {
	s := h.Open(t)
	names := []string{
		"Caf\u00e9",           // é precomposed (NFC)
		"Cafe\u0301",          // e + combining acute (NFD): other content
		"שושנה",               // right to left
		"\u202eesor",          // an explicit direction override
		"仙人掌",                 // CJK
		"Ａｌｏｅ",                // full width forms
		"  spaced out  ",      // leading and trailing spaces
		"\u00a0nbsp\u00a0",    // no-break spaces
		"emoji 🌵🌿🪴 zwj 👩‍🌾",   // multi-code-point sequences
		"quote ' \" \\ % _ ;", // characters SQL cares about
	}
	for i, name := range names {
		p := plant(t, int64(100+i), name, tag(name))
		mustInsert(t, s, p)
	}
	for i, name := range names {
		stored := plant(t, int64(100+i), name, tag(name))
		mustFind(t, s, plant(t, int64(100+i), name, tag(name)), stored)
	}
	// NFC and NFD spellings are different content, never a replay.
	mustFind(t, s, plant(t, 100, "Cafe\u0301", tag("Caf\u00e9")), plant(t, 100, "Caf\u00e9", tag("Caf\u00e9")))
}

// storesInjectionAttemptsAsText stores names and a tag built to break SQL,
// templates, HTML and logs as the plain text they are: each reads back and
// replays byte for byte, and the tag matches exactly as a list filter.
func storesInjectionAttemptsAsText(t *testing.T, h Harness) {
	s := h.Open(t)
	names := []string{
		`'; DROP TABLE plants; --`, `Robert'); DROP TABLE plants;--`, `" OR "1"="1`, `1; SELECT pg_sleep(10)`,
		`\'; --`, `%s%n%x`, `${jndi:ldap://example.invalid/a}`, `{{7*7}}`, `<script>alert(1)</script>`,
		"line\u2028separator", "right-to-left \u202eoverride", `$1::text`, `?`, `E'\\x41'`,
	}
	const injected = `' OR ''='`
	var want []domain.Plant
	for i, name := range names {
		p := plant(t, int64(1000+i), name, tag(injected))
		mustInsert(t, s, p)
		mustFind(t, s, plant(t, int64(1000+i), name, tag(injected)), p)
		mustFindByID(t, s, p.ID(), p, true)
		want = append(want, p)
	}
	mustInsert(t, s, plant(t, 2000, "untagged", nil))
	expectList(t, s, application.ListQuery{Limit: 100, Tag: want[0].Tag()}, want, false)
}

func keepsTagAbsence(t *testing.T, h Harness) {
	s := h.Open(t)
	none := plant(t, 20, "Pilea", nil)
	some := plant(t, 21, "Pilea", tag("Pilea"))
	mustInsert(t, s, none)
	mustInsert(t, s, some)
	got := mustFind(t, s, plant(t, 20, "Pilea", nil), none)
	if got.Tag() != domain.NoTag || got.Tag().IsSet() {
		t.Errorf("plant stored without a tag came back with tag %q", got.Tag())
	}
	got = mustFind(t, s, plant(t, 21, "Pilea", tag("Pilea")), some)
	if !got.Tag().IsSet() {
		t.Errorf("plant stored with a tag came back without one")
	}
}

func oneWinnerUnderConcurrentCreatesOfOneID(t *testing.T, h Harness) {
	s := h.Open(t)
	const callers = 32
	a := plant(t, 30, "Calathea", tag("A"))
	b := plant(t, 30, "Maranta", tag("B"))

	type outcome struct {
		stored   domain.Plant
		inserted bool
		err      error
	}
	outcomes := make([]outcome, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			p := a
			if i%2 == 1 {
				p = b
			}
			<-start
			o := &outcomes[i]
			o.stored, o.inserted, o.err = s.InsertIfAbsent(context.Background(), record(p))
		})
	}
	close(start)
	wg.Wait()

	winners := 0
	var winner domain.Plant
	for i, o := range outcomes {
		if o.err != nil {
			t.Fatalf("caller %d: InsertIfAbsent: %v", i, o.err)
		}
		if o.inserted {
			winners++
			winner = o.stored
		}
	}
	if winners != 1 {
		t.Fatalf("%d callers inserted id 30, want exactly 1", winners)
	}
	if winner != a && winner != b {
		t.Fatalf("winner stored %s, want one of the submitted plants", describe(winner))
	}
	for i, o := range outcomes {
		if o.stored != winner {
			t.Errorf("caller %d saw %s, want the winner's %s", i, describe(o.stored), describe(winner))
		}
	}
}

func insertsManyIDsConcurrently(t *testing.T, h Harness) {
	s := h.Open(t)
	const n = 200
	plants := make([]domain.Plant, n)
	for i := range plants {
		plants[i] = plant(t, int64(1000+i), "plant", nil)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, p := range plants {
		wg.Go(func() {
			stored, inserted, err := s.InsertIfAbsent(context.Background(), record(p))
			switch {
			case err != nil:
				errs[i] = err
			case !inserted:
				errs[i] = errors.New("not inserted")
			case stored != p:
				errs[i] = errors.New("returned " + describe(stored))
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("id %d: %v", 1000+i, err)
		}
	}
}

func refusesACancelledContext(t *testing.T, h Harness) {
	s := h.Open(t)
	p := plant(t, 40, "Sansevieria", tag("snake"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.InsertIfAbsent(ctx, record(p)); !errors.Is(err, context.Canceled) {
		t.Fatalf("InsertIfAbsent with a cancelled context = %v, want context.Canceled", err)
	}
	// Nothing was half-written: the same create succeeds afterwards, as a
	// first insert or as a replay.
	stored, _, err := s.InsertIfAbsent(context.Background(), record(p))
	if err != nil {
		t.Fatalf("InsertIfAbsent after a cancelled attempt: %v", err)
	}
	if stored != p {
		t.Fatalf("stored %s, want %s", describe(stored), describe(p))
	}
}

func keepsAcknowledgedPlants(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("the harness cannot open a second store on the same database")
	}
	s := h.Open(t)
	var acked []domain.Plant
	for i := range 20 {
		tg := tag("durable")
		if i%2 == 0 {
			tg = nil
		}
		p := plant(t, int64(50+i), strings.Repeat("é", i+1), tg)
		mustInsert(t, s, p)
		acked = append(acked, p)
	}
	other := h.Reopen(t, s)
	for _, p := range acked {
		mustFind(t, other, plant(t, int64(p.ID()), "replaced?", nil), p)
	}
}
