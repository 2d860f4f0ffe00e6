package plantjson

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/domain"
)

// The largest plant the rules allow, and its event, render to exactly
// their bounds; a plant of other characters with every text at its longest
// stays within them. The plant has every field of domain.PlantFields, so a
// field added to the domain fails here until the bounds count it.
func TestTheLargestPlantAndEventFitTheirBounds(t *testing.T) {
	longest := time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC)
	for _, tt := range []struct {
		name    string
		char    string
		largest bool
	}{
		{"four-byte characters", "🌵", true},
		{"quotes", `"`, false},
		{"backslashes", `\`, false},
		{"three-byte characters", "大", false},
		{"ASCII", "a", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := domain.RestorePlant(longestFields(t, tt.char))
			if err != nil {
				t.Fatal(err)
			}
			item := AppendItem(nil, p)
			event, err := AppendEvent(nil, "plant.changed", 9223372036854775807, longest, string(item))
			if err != nil {
				t.Fatal(err)
			}
			if len(item) > MaxItemBytes || len(event) > MaxEventBytes {
				t.Fatalf("item %d bytes, event %d; bounds %d and %d", len(item), len(event), MaxItemBytes, MaxEventBytes)
			}
			if tt.largest && (len(item) != MaxItemBytes || len(event) != MaxEventBytes) {
				t.Errorf("the largest item is %d bytes, its event %d; bounds %d and %d, which are not tight", len(item), len(event), MaxItemBytes, MaxEventBytes)
			}
		})
	}
}

// longestFields are a plant's fields with the longest id and every text
// field, optional ones included, at the most code points char that the
// plant rules accept, found by asking them. The fields are found by
// reflection; one of a type this cannot fill fails the test, and so does a
// text the rules accept at any length, since nothing could bound its bytes.
func longestFields(t *testing.T, char string) domain.PlantFields {
	t.Helper()
	f := domain.PlantFields{ID: math.MinInt64}
	v := reflect.ValueOf(&f).Elem()
	var texts []func(string)
	for i := range v.NumField() {
		field, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case name == "ID":
		case field.Kind() == reflect.String:
			texts = append(texts, field.SetString)
		case field.Type() == reflect.TypeFor[*string]():
			texts = append(texts, func(s string) { field.Set(reflect.ValueOf(&s)) })
		default:
			t.Fatalf("domain.PlantFields.%s is a %s: give longestFields its largest value", name, field.Type())
		}
	}
	for _, set := range texts {
		set("a")
	}
	accepts := func(set func(string), n int) bool {
		set(strings.Repeat(char, n))
		_, err := domain.ParseNewPlant(f)
		return err == nil
	}
	const unbounded = 1 << 16
	for i, set := range texts {
		n := 1 // the most code points accepted: double, then halve the step
		for ; accepts(set, 2*n); n *= 2 {
			if n >= unbounded {
				t.Fatalf("text field %d of domain.PlantFields takes %d code points and more: its bytes have no bound", i, n)
			}
		}
		for step := n / 2; step > 0; step /= 2 {
			if accepts(set, n+step) {
				n += step
			}
		}
		if !accepts(set, n) {
			t.Fatalf("text field %d of domain.PlantFields takes no text of %q", i, char)
		}
	}
	return f
}
