package storetest

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// withEveryField is a plant with id, every optional field of
// domain.PlantFields set (set) or left out (!set), and every text made of
// prefix and the field's name. The fields are found by reflection, so that
// a field added to the domain is stored, read, listed and updated by every
// store in keepsEveryFieldOfAPlant without an edit here; a field of a type
// this cannot fill fails the test, so that it gets a value.
func withEveryField(t *testing.T, id int64, prefix string, set bool) domain.Plant {
	t.Helper()
	var f domain.PlantFields
	v := reflect.ValueOf(&f).Elem()
	for i := range v.NumField() {
		field, name := v.Field(i), v.Type().Field(i).Name
		text := prefix + " " + strings.ToLower(name)
		switch {
		case name == "ID":
			field.SetInt(id)
		case field.Kind() == reflect.String:
			field.SetString(text)
		case field.Type() == reflect.TypeFor[*string]():
			if set {
				field.Set(reflect.ValueOf(&text))
			}
		default:
			t.Fatalf("domain.PlantFields.%s is a %s: give withEveryField a valid value of it", name, field.Type())
		}
	}
	np, err := domain.ParseNewPlant(f)
	if err != nil {
		t.Fatalf("a plant with every field: %v", err)
	}
	return domain.PlantFrom(np)
}

// keepsEveryFieldOfAPlant stores a plant with every field set, and one
// with every optional field left out, and checks that every field comes
// back from a read, a list and a create's replay, and through updates that
// set and clear them all.
func keepsEveryFieldOfAPlant(t *testing.T, h Harness) {
	s := h.Open(t)
	ctx := context.Background()
	full, bare := withEveryField(t, 140, "Full", true), withEveryField(t, 141, "Bare", false)
	for _, p := range []domain.Plant{full, bare} {
		mustInsert(t, s, p)
		mustFind(t, s, p, p)
		mustFindByID(t, s, p.ID(), p, true)
	}
	page, err := s.ListPlants(ctx, application.ListQuery{After: 139, HasAfter: true, Limit: 2})
	if want := plantjson.AppendList(nil, []domain.Plant{full, bare}); err != nil || string(page.JSON) != string(want) {
		t.Fatalf("list of both = %s, %v; want %s", page.JSON, err, want)
	}
	// Every field set, then every one cleared, through updates.
	swapped := map[domain.ID]domain.Plant{140: withEveryField(t, 140, "Full", false), 141: withEveryField(t, 141, "Bare", true)}
	for id, next := range swapped {
		got, err := s.UpdatePlant(ctx, id, func(domain.Plant) (domain.Plant, error) { return next, nil })
		if err != nil || got != next {
			t.Fatalf("UpdatePlant(%d) = %s, %v; want %s", id, describe(got), err, describe(next))
		}
		mustFindByID(t, s, id, next, true)
	}
	if h.Reopen != nil {
		other := h.Reopen(t, s)
		for id, want := range swapped {
			mustFindByID(t, other, id, want, true)
		}
	}
}

// describe shows a plant with every field's exact bytes, so that NFC/NFD
// and white space differences are visible in failures.
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
		case field.Kind() == reflect.Pointer:
			fmt.Fprintf(&b, " %s %+q", name, field.Elem().String())
		default:
			fmt.Fprintf(&b, " %s %+q", name, field.String())
		}
	}
	return b.String()
}
