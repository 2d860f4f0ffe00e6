package sqlite

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// The table refuses rows the plant rules refuse, even when written around
// the application.
func TestSchemaRefusesBadRows(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	insert := func(id int64, name, tag any) error {
		_, err := s.write.ExecContext(ctx,
			`INSERT INTO plants (id, name, tag, created_by, created_at) VALUES (?, ?, ?, 'sql', '2026-01-01T00:00:00.000000000Z')`,
			id, name, tag)
		return err
	}
	for _, c := range []struct {
		what      string
		name, tag any
	}{
		{"empty name", "", nil},
		{"name of 201 characters", strings.Repeat("a", 201), nil},
		{"null name", nil, nil},
		{"empty tag", "Fern", ""},
		{"tag of 65 characters", "Fern", strings.Repeat("🌵", 65)},
	} {
		if err := insert(1, c.name, c.tag); err == nil {
			t.Errorf("%s: accepted", c.what)
		}
	}
	// Lengths count characters, not bytes: 200 four-byte characters fit.
	if err := insert(2, strings.Repeat("🌵", 200), strings.Repeat("🌵", 64)); err != nil {
		t.Errorf("200-character name of 800 bytes: %v", err)
	}
}

// The queries of a page are range scans: the rowid without a tag, the
// partial tag index with one; none scans the table nor sorts its rows (the
// only sort is of the page's own items, by the ORDER BY of group_concat).
// So are the queries of a page rendered from its rows.
func TestListQueriesUseTheirIndex(t *testing.T) {
	s := newStore(t)
	for query, want := range map[string]string{
		listPlants:           "SEARCH plants USING INTEGER PRIMARY KEY (rowid>?)",
		listTaggedPlants:     "SEARCH plants USING INDEX plants_tag_id (tag=? AND id>?)",
		listPlantRows:        "SEARCH plants USING INTEGER PRIMARY KEY (rowid>?)",
		listTaggedPlantsRows: "SEARCH plants USING INDEX plants_tag_id (tag=? AND id>?)",
	} {
		var plan []string
		args := []any{10, 0}
		if query == listTaggedPlants || query == listTaggedPlantsRows {
			args = append(args, "x")
		}
		rows, err := s.read.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if !slices.Contains(plan, want) || slices.ContainsFunc(plan, func(d string) bool {
			return strings.HasPrefix(d, "SCAN plants") || d == "USE TEMP B-TREE FOR ORDER BY"
		}) {
			t.Errorf("%s: plan %q, want %q and no scan or sort of plants", query, plan, want)
		}
	}
}
