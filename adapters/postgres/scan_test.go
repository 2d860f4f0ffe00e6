package postgres

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// Rows are scanned by position: a statement that selects the row's columns
// in another order is refused before it fills a field, even where the
// types would let one column fill another's field (name and tag, both
// text), and one that selects them in order is read as stored.
func TestRowsAreScannedOnlyInTheRowsOrder(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	if _, _, err := s.InsertIfAbsent(ctx, record(t, 7, "Fern", "shade")); err != nil {
		t.Fatal(err)
	}
	names := strings.Split(columnList(""), ", ")
	for _, selected := range [][]string{swap(names, "name", "tag"), swap(names, "item", "created_by")} {
		rows, err := s.db.QueryxContext(ctx, `SELECT `+strings.Join(selected, ", ")+` FROM plants`)
		if err != nil {
			t.Fatal(err)
		}
		var r plantRow
		scan := rowScanner(rows, &r)
		if !rows.Next() {
			t.Fatalf("no row: %v", rows.Err())
		}
		if err := scan(); err == nil {
			t.Errorf("SELECT %v scanned as the row's columns: %+v", selected, r)
		}
		_ = rows.Close()
	}
	rows, err := s.db.QueryxContext(ctx, `SELECT `+columnList("")+`, true AS flag FROM plants`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var row answerRow
	scan := rowScanner(rows, &row.plantRow, &row.Flag)
	if !rows.Next() {
		t.Fatalf("no row: %v", rows.Err())
	}
	if err := scan(); err != nil {
		t.Fatal(err)
	}
	p, err := row.plant()
	if err != nil || p != record(t, 7, "Fern", "shade").Plant || !row.Flag || !row.Version.Valid || row.Version.Int64 < 1 || row.CreatedBy.String != "tester" {
		t.Errorf("scanned %+v (%v)", row, err)
	}
}

// swap is names with a and b in each other's place.
func swap(names []string, a, b string) []string {
	out := slices.Clone(names)
	i, j := slices.Index(out, a), slices.Index(out, b)
	out[i], out[j] = out[j], out[i]
	return out
}
