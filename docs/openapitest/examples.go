package openapitest

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// Instance is an object of the document's schema name with every property
// it declares, each the example the document gives for it (through a
// reference, allOf or the first alternative of anyOf), and the names of
// the properties that also take null. A test of every field of a plant
// builds its bodies from it, so that a property added to the document is
// sent without an edit to the test.
func (c *Contract) Instance(t testing.TB, name string) (object map[string]any, nullable []string) {
	t.Helper()
	ref := c.doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		t.Fatalf("openapi: no schema %s", name)
	}
	object = map[string]any{}
	for prop, schema := range ref.Value.Properties {
		example, null := exampleOf(schema.Value)
		if example == nil {
			t.Fatalf("openapi: %s.%s has no example", name, prop)
		}
		object[prop] = example
		if null {
			nullable = append(nullable, prop)
		}
	}
	return object, nullable
}

// exampleOf is s's first example, or its first alternative's, and whether
// s also takes null: its type allows null, or one of its alternatives is
// of type null (OpenAPI 3.1).
func exampleOf(s *openapi3.Schema) (example any, nullable bool) {
	if s == nil {
		return nil, false
	}
	nullable = s.Type.Includes(openapi3.TypeNull)
	for _, alt := range s.AnyOf {
		if alt.Value != nil && alt.Value.Type.Is(openapi3.TypeNull) {
			nullable = true
		}
	}
	if len(s.Examples) > 0 {
		return s.Examples[0], nullable
	}
	for _, alts := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf} {
		for _, alt := range alts {
			if example, _ := exampleOf(alt.Value); example != nil {
				return example, nullable
			}
		}
	}
	return nil, nullable
}
