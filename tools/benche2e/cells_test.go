package main

import (
	"slices"
	"strings"
	"testing"
)

// With -own-schema each binary's cells run on its own store, the builds of
// one scenario next to each other, and the references once, on the first
// binary's store, as the ratio's denominator of every build.
func TestEachBuildOnItsOwnStore(t *testing.T) {
	o, err := parseOptions(strings.Fields("-ops change,get -stores postgres -own-schema -bin /b/old -bin /b/new"))
	if err != nil {
		t.Fatal(err)
	}
	old, cur := &store{kind: "postgres", url: "postgres://old", bin: "/b/old"}, &store{kind: "postgres", url: "postgres://new", bin: "/b/new"}
	b := &bench{o: o, bins: o.bins, stores: []*store{old, cur}}
	var got []string
	cells := b.newCells()
	for _, c := range cells {
		line := c.sc.name + " " + c.load
		if c.server == "service" {
			if c.store.bin != c.bin || !slices.Contains(c.env, "PLANTSTORE_DATABASE_URL="+c.store.url) {
				t.Errorf("%s: runs %s on the store of %s (%v)", line, c.bin, c.store.bin, c.env)
			}
		} else if c.store != old {
			t.Errorf("%s: a reference on the store of %s, want the first binary's", line, c.store.bin)
		}
		got = append(got, line)
	}
	want := []string{"get pgbench", "get service old", "get service new", "change pgbench", "change service old", "change service new"}
	if !slices.Equal(got, want) {
		t.Fatalf("cells %q, want %q", got, want)
	}
	b.cells = cells
	if r := b.referenceOf(cells[2]); r != cells[0] {
		t.Errorf("the new build's ratio is against %v, want the first store's pgbench", r)
	}
}
