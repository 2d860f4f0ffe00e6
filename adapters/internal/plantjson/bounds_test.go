package plantjson

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
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

// longestFields are a plant's fields with the longest id and every field,
// optional ones included, at the value of the longest rendering that the
// plant rules accept, found by asking them (domain.RestorePlant, which
// takes every field, those the server sets included): every text at the
// most code points char, every time at the latest instant with every digit
// of its fraction, a boolean false, a number at the end of what the rules
// accept whose spelling is longest. The fields are found by reflection, a
// pointer standing for a field a plant may lack; one of a kind this cannot
// fill fails the test, and so does a text the rules accept at any length,
// since nothing could bound its bytes.
func longestFields(t *testing.T, char string) domain.PlantFields {
	t.Helper()
	f := domain.PlantFields{ID: math.MinInt64}
	v := reflect.ValueOf(&f).Elem()
	accepted := func() bool {
		_, err := domain.RestorePlant(f)
		return err == nil
	}
	var texts []func(string)
	var others []func()
	for i := range v.NumField() {
		field, name := v.Field(i), v.Type().Field(i).Name
		if name == "ID" {
			continue
		}
		value := field
		if field.Kind() == reflect.Pointer {
			value = reflect.New(field.Type().Elem()).Elem()
			field.Set(value.Addr())
		}
		switch {
		case value.Kind() == reflect.String:
			texts = append(texts, value.SetString)
		case value.Type() == reflect.TypeFor[time.Time]():
			others = append(others, func() { longestTime(t, name, value, accepted) })
		case value.Kind() == reflect.Bool:
			others = append(others, func() {
				if value.SetBool(false); !accepted() {
					value.SetBool(true)
				}
			})
		case value.CanInt(), value.CanUint():
			others = append(others, func() { longestNumber(t, name, value, accepted) })
		default:
			t.Fatalf("domain.PlantFields.%s holds a %s, whose longest rendering longestFields cannot find: give it its largest value here", name, value.Type())
		}
	}
	for _, set := range texts {
		set("a")
	}
	for _, set := range others {
		set()
	}
	accepts := func(set func(string), n int) bool {
		set(strings.Repeat(char, n))
		return accepted()
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

// longestTime sets v, the time of the field name, to the latest instant
// RFC 3339 spells (year 9999) with all nine digits of its fraction, which
// renders longest, in UTC and in the zone that spells longest; or, where
// the rules refuse those, to the same instant of this year.
func longestTime(t *testing.T, name string, v reflect.Value, accepted func() bool) {
	t.Helper()
	now := time.Now().UTC()
	for _, at := range []time.Time{
		time.Date(9999, 12, 30, 23, 59, 59, 999999999, time.FixedZone("", -(23*3600+59*60))),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(now.Year(), now.Month(), now.Day(), 23, 59, 59, 999999999, time.UTC).AddDate(0, 0, -1),
	} {
		if v.Set(reflect.ValueOf(at)); accepted() {
			return
		}
	}
	t.Fatalf("domain.PlantFields.%s takes none of the latest times: give longestFields the latest one it takes", name)
}

// longestNumber sets v, the number of the field name, to whichever end of
// the numbers the rules accept spells longest: the extremes of its type,
// or, for rules that accept a range around a small number, the range's
// ends, found by halving.
func longestNumber(t *testing.T, name string, v reflect.Value, accepted func() bool) {
	t.Helper()
	set := func(n int64) bool {
		if v.CanUint() {
			if n < 0 {
				return false
			}
			v.SetUint(uint64(n))
		} else {
			if v.OverflowInt(n) {
				return false
			}
			v.SetInt(n)
		}
		return accepted()
	}
	if v.CanUint() {
		if v.SetUint(math.MaxUint64 >> (64 - v.Type().Bits())); accepted() {
			return // no number of the type spells longer
		}
	}
	seed, found := int64(0), false
	for _, n := range []int64{0, 1, -1} {
		if set(n) {
			seed, found = n, true
			break
		}
	}
	if !found {
		t.Fatalf("domain.PlantFields.%s takes none of 0, 1 and -1: give longestFields its largest value", name)
	}
	// The end of the accepted numbers from seed on, towards step's sign.
	end := func(step int64) int64 {
		last := seed
		for step != 0 {
			if next := last + step; (step > 0) == (next > last) && set(next) {
				last = next
				if step > math.MinInt64/2 && step < math.MaxInt64/2 {
					step *= 2
				}
			} else {
				step /= 2
			}
		}
		return last
	}
	lo, hi := end(-1), end(1)
	n := hi
	if len(strconv.FormatInt(lo, 10)) > len(strconv.FormatInt(hi, 10)) {
		n = lo
	}
	set(n)
}

// longestNumber finds, for a number field, the end of what the rules accept
// that spells longest, whatever the range and the type, so that the bounds
// of a plant with a number field are held tight (the case of the largest
// plant) rather than by a value that merely fits.
func TestLongestNumberIsTheEndOfTheRangeThatSpellsLongest(t *testing.T) {
	for _, tt := range []struct {
		name    string
		zero    any
		accepts func(n int64, u uint64) bool // the value as the type's kind holds it
		want    string
	}{
		{"every int64", int64(0), func(int64, uint64) bool { return true }, "-9223372036854775808"},
		{"every int8", int8(0), func(int64, uint64) bool { return true }, "-128"},
		{"1 to 12", int32(0), func(n int64, _ uint64) bool { return n >= 1 && n <= 12 }, "12"},
		{"-100 to 5", int32(0), func(n int64, _ uint64) bool { return n >= -100 && n <= 5 }, "-100"},
		{"not negative", int64(0), func(n int64, _ uint64) bool { return n >= 0 }, "9223372036854775807"},
		{"not positive", int64(0), func(n int64, _ uint64) bool { return n <= 0 }, "-9223372036854775808"},
		{"every uint64", uint64(0), func(int64, uint64) bool { return true }, "18446744073709551615"},
		{"uint up to 1000", uint(0), func(_ int64, u uint64) bool { return u <= 1000 }, "1000"},
	} {
		v := reflect.New(reflect.TypeOf(tt.zero)).Elem()
		longestNumber(t, tt.name, v, func() bool {
			if v.CanUint() {
				return tt.accepts(0, v.Uint())
			}
			return tt.accepts(v.Int(), 0)
		})
		if got := fmt.Sprint(v.Interface()); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
