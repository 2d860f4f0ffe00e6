package postgres

import (
	"context"
	"database/sql"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// The literals are read back by PostgreSQL itself: whatever a plant's name
// holds must come out of the array exactly as it went in.
func TestArrayLiteralsRoundTripThroughPostgres(t *testing.T) {
	db, err := sqlx.Open("postgres", pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()

	texts := []sql.NullString{
		{String: "Monstera deliciosa", Valid: true},
		{String: "", Valid: true},
		{}, // NULL
		{String: "NULL", Valid: true},
		{String: `say "hi"`, Valid: true},
		{String: `back\slash\`, Valid: true},
		{String: "{braces}, commas", Valid: true},
		{String: "  spaced  ", Valid: true},
		{String: "Fleur de lys ⚜ 百合", Valid: true},
	}
	elems, valid := make([]string, len(texts)), make([]bool, len(texts))
	for k, t := range texts {
		elems[k], valid[k] = t.String, t.Valid
	}
	lit := textArray(elems, valid)
	var got []sql.NullString
	if err := db.SelectContext(ctx, &got, `SELECT t FROM unnest($1::text[]) WITH ORDINALITY AS u (t, n) ORDER BY n`, lit); err != nil {
		t.Fatalf("unnest %s: %v", lit, err)
	}
	if !slices.Equal(got, texts) {
		t.Errorf("text[] %s read back as %v, want %v", lit, got, texts)
	}

	// Random strings over the characters that mean something in an array
	// literal or to PostgreSQL's text input, in one array.
	alphabet := []rune("\"\\{},NUL nul'()[]:; \t\u00a0\u2028é⚜百")
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]string, 300)
	for k := range random {
		r := make([]rune, rng.IntN(12))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		random[k] = string(r)
	}
	var gotRandom []string
	if err := db.SelectContext(ctx, &gotRandom, `SELECT t FROM unnest($1::text[]) WITH ORDINALITY AS u (t, n) ORDER BY n`, textArray(random, nil)); err != nil {
		t.Fatalf("unnest random strings: %v", err)
	}
	if !slices.Equal(gotRandom, random) {
		for k := range min(len(gotRandom), len(random)) {
			if gotRandom[k] != random[k] {
				t.Fatalf("random string %d %q read back as %q", k, random[k], gotRandom[k])
			}
		}
		t.Fatalf("%d random strings read back as %d", len(random), len(gotRandom))
	}

	ids := []int64{math.MinInt64, -1, 0, 7, math.MaxInt64}
	var gotIDs []int64
	if err := db.SelectContext(ctx, &gotIDs, `SELECT i FROM unnest($1::bigint[]) WITH ORDINALITY AS u (i, n) ORDER BY n`, bigintArray(ids)); err != nil {
		t.Fatalf("unnest %s: %v", bigintArray(ids), err)
	}
	if !slices.Equal(gotIDs, ids) {
		t.Errorf("bigint[] read back as %v, want %v", gotIDs, ids)
	}

	var empty int
	if err := db.GetContext(ctx, &empty, `SELECT count(*) FROM unnest($1::text[])`, textArray(nil, nil)); err != nil || empty != 0 {
		t.Errorf("empty text[]: %d elements, %v", empty, err)
	}
}
