package storetest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/domain"
)

// The plants of keepsEveryFieldOfAPlant are built from domain.PlantFields
// by reflection, so that a field added to the domain, whether a create
// gives it or the server sets it, is stored, read, listed and updated by
// every store with no edit here. What they can fill: text, times, booleans
// and numbers, each as a plain field (always given) or behind a pointer
// (given when set, nil when not: a field a plant may lack). A field of any
// other kind fails the suite with its name, so that it gets a value here.

// timeType is time.Time, filled as a time the stores keep exactly.
var timeType = reflect.TypeFor[time.Time]()

// storedTime is the time withEveryField gives a plant of id: a time every
// store keeps as it is, at whole microseconds (PostgreSQL's precision), in
// UTC, one second apart between plants, so that rows mixed up show.
func storedTime(id int64) time.Time {
	return time.Date(2026, 12, 7, 10, 30, 0, 123456000, time.UTC).Add(time.Duration(id%3600) * time.Second)
}

// withEveryField is a plant with id, every optional field of
// domain.PlantFields set (set) or left out (!set), every text made of
// prefix and the field's name. It is restored as a stored row is
// (domain.RestorePlant), so that the fields the server sets, which a create
// does not give, are set too.
func withEveryField(t *testing.T, id int64, prefix string, set bool) domain.Plant {
	t.Helper()
	var f domain.PlantFields
	v := reflect.ValueOf(&f).Elem()
	for i := range v.NumField() {
		field, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case name == "ID":
			field.SetInt(id)
		case field.Kind() == reflect.Pointer:
			if set {
				value := reflect.New(field.Type().Elem())
				fill(t, name, value.Elem(), id, prefix+" "+strings.ToLower(name))
				field.Set(value)
			}
		default:
			fill(t, name, field, id, prefix+" "+strings.ToLower(name))
		}
	}
	p, err := domain.RestorePlant(f)
	if err != nil {
		t.Fatalf("a plant with every field: %v", err)
	}
	return p
}

// fill gives v, the value of the field name (or the value its pointer
// points at), the suite's value for a plant of id: text for a text.
func fill(t *testing.T, name string, v reflect.Value, id int64, text string) {
	t.Helper()
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(storedTime(id)))
	case v.Kind() == reflect.String:
		v.SetString(text)
	case v.Kind() == reflect.Bool:
		v.SetBool(true)
	case v.CanInt():
		v.SetInt(1)
	case v.CanUint():
		v.SetUint(1)
	case v.CanFloat():
		v.SetFloat(0.5)
	default:
		t.Fatalf("domain.PlantFields.%s holds a %s, which the store suite cannot fill: give it a valid value in fill (storetest/fieldvalues.go)", name, v.Type())
	}
}

// timesAreKeptAsStoresKeepThem fails t unless the plant rules hold every
// time a plant has as every store keeps it: in UTC, at whole microseconds,
// or refuse a finer one. A plant that held a time as given would come back
// from PostgreSQL, which keeps microseconds and no zone, as another plant
// than the one stored (Plant is compared with ==, which sees nanoseconds
// and zones), while the memory store kept it whole.
func timesAreKeptAsStoresKeepThem(t *testing.T) {
	t.Helper()
	fine := time.Date(2026, 12, 7, 11, 30, 0, 123456789, time.FixedZone("UTC+1", 3600))
	f := withEveryField(t, 1, "Fine", true).Fields()
	v := reflect.ValueOf(&f).Elem()
	var times []string
	for i := range v.NumField() {
		if field := v.Field(i); field.Type() == timeType {
			field.Set(reflect.ValueOf(fine))
			times = append(times, v.Type().Field(i).Name)
		} else if field.Type() == reflect.PointerTo(timeType) && !field.IsNil() {
			field.Set(reflect.ValueOf(&fine))
			times = append(times, v.Type().Field(i).Name)
		}
	}
	if len(times) == 0 {
		return
	}
	p, err := domain.RestorePlant(f)
	if err != nil {
		return // refused: no plant holds the finer time
	}
	kept := reflect.ValueOf(p.Fields())
	for _, name := range times {
		field := reflect.Indirect(kept.FieldByName(name))
		if !field.IsValid() {
			t.Fatalf("domain.PlantFields.%s given %s is kept as none", name, fine.Format(time.RFC3339Nano))
		}
		got := field.Interface().(time.Time)
		if got.Location() != time.UTC || got.Nanosecond()%1000 != 0 || got.Sub(fine).Abs() >= time.Microsecond {
			t.Fatalf("domain.PlantFields.%s given %s is kept as %s: the plant must hold a time as every store keeps it, in UTC at whole microseconds (t.UTC().Truncate(time.Microsecond)), or refuse a finer one", name, fine.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano))
		}
	}
}

// describe shows a plant with every field's exact value, texts quoted, so
// that NFC/NFD and white space differences are visible in failures.
func describe(p domain.Plant) string {
	f := p.Fields()
	v := reflect.ValueOf(f)
	var b strings.Builder
	fmt.Fprintf(&b, "plant %d", f.ID)
	for i := range v.NumField() {
		field, name := v.Field(i), strings.ToLower(v.Type().Field(i).Name)
		switch {
		case name == "id":
		case field.Kind() == reflect.Pointer && field.IsNil():
			fmt.Fprintf(&b, " no %s", name)
		default:
			fmt.Fprintf(&b, " %s %s", name, show(reflect.Indirect(field)))
		}
	}
	return b.String()
}

// show is v exactly: a text quoted, a time to the nanosecond with its zone.
func show(v reflect.Value) string {
	switch {
	case v.Type() == timeType:
		return v.Interface().(time.Time).Format(time.RFC3339Nano)
	case v.Kind() == reflect.String:
		return fmt.Sprintf("%+q", v.String())
	}
	return fmt.Sprint(v.Interface())
}
