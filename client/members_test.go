package client

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/client/internal/oapi"
)

// The client's types carry every member the document gives a plant, so
// that a field added to the document (and generated into package oapi)
// fails here until the client offers it: Plant has each member of the
// document's PlantItem, NewPlant each of NewPlant, and Patch a Set method
// for each member of PlantPatch and a Remove method for each that takes
// null. The client encodes and decodes these types as they are.
func TestTypesCarryEveryMemberOfTheDocument(t *testing.T) {
	for _, pair := range []struct{ client, document any }{
		{Plant{}, oapi.PlantItem{}},
		{NewPlant{}, oapi.NewPlant{}},
	} {
		got, want := members(reflect.TypeOf(pair.client)), members(reflect.TypeOf(pair.document))
		if !slices.Equal(got, want) {
			t.Errorf("%T has the JSON members %v; the document's %T has %v", pair.client, got, pair.document, want)
		}
	}

	patch := reflect.TypeOf(oapi.PlantPatch{})
	for i := range patch.NumField() {
		f := patch.Field(i)
		name := jsonName(f)
		set, ok := reflect.TypeOf(Patch{}).MethodByName("Set" + f.Name)
		if !ok {
			t.Errorf("Patch has no Set%s for the member %s", f.Name, name)
			continue
		}
		p := set.Func.Call([]reflect.Value{reflect.ValueOf(Patch{}), reflect.ValueOf("x")})[0].Interface().(Patch)
		if b, _ := json.Marshal(p); string(b) != `{"`+name+`":"x"}` {
			t.Errorf("Patch.Set%s sends %s", f.Name, b)
		}
		if !takesNull(t, name) {
			continue
		}
		remove, ok := reflect.TypeOf(Patch{}).MethodByName("Remove" + f.Name)
		if !ok {
			t.Errorf("Patch has no Remove%s for the member %s, which takes null", f.Name, name)
			continue
		}
		p = remove.Func.Call([]reflect.Value{reflect.ValueOf(Patch{})})[0].Interface().(Patch)
		if b, _ := json.Marshal(p); string(b) != `{"`+name+`":null}` {
			t.Errorf("Patch.Remove%s sends %s", f.Name, b)
		}
	}
}

// takesNull says whether the document lets the member name of a patch be
// null, as the generated PlantPatch shows it whatever type the generator
// gives the member: it keeps a null it reads and sends it again, where a
// member that cannot be null reads null as left out.
func takesNull(t *testing.T, name string) bool {
	t.Helper()
	var p oapi.PlantPatch
	if err := json.Unmarshal([]byte(`{"`+name+`":null}`), &p); err != nil {
		t.Fatalf("the generated PlantPatch reading a null %s: %v", name, err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("the generated PlantPatch with a null %s: %v", name, err)
	}
	return string(b) == `{"`+name+`":null}`
}

// members are the JSON member names of the struct type t, sorted.
func members(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if name := jsonName(t.Field(i)); name != "-" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// Every error code the document lists has its Code constant, with the
// document's value, and no constant names a code the document lacks.
func TestCodesAreTheDocuments(t *testing.T) {
	ours := []int{
		CodeMalformedBody, CodeInvalidField, CodeMissingToken, CodeInvalidToken, CodeInsufficientScope,
		CodeNoSuchRoute, CodeNoSuchPlant, CodeMethodNotAllowed, CodeConflict, CodeFeedExpired, CodePreconditionFailed,
		CodeBodyTooLarge, CodeUnsupportedMediaType, CodeInternalError, CodeUnavailable,
	}
	var documented []int
	for code := range 100000 {
		if oapi.ErrorError(code).Valid() {
			documented = append(documented, code)
		}
	}
	if !slices.Equal(ours, documented) {
		t.Fatalf("the Code constants are %v; the document's codes are %v", ours, documented)
	}
}
