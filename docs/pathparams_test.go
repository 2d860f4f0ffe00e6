package docs_test

import (
	"regexp"
	"testing"
)

// Every operation declares each parameter of its path template itself, and
// no path item declares parameters. Swagger UI 5 (the reference page at
// /docs) copies a path item's parameters into its operations before it
// resolves them, and an operation it resolves as the page loads (one opened
// by its link, or after a reload) keeps the copy of a $ref unresolved: a
// row with no name, typed any, and "Try it out" sending /plants/%7Bid%7D.
// cmd/plantstore's TestReferencePageInABrowser shows it in Chromium; this
// holds it where no browser runs.
func TestOperationsDeclareTheirPathParameters(t *testing.T) {
	doc, _ := contract(t)
	template := regexp.MustCompile(`\{([^}]+)\}`)
	for path, item := range doc.Paths.Map() {
		if len(item.Parameters) != 0 {
			t.Errorf("%s declares parameters on its path item; declare them on each operation", path)
		}
		for method, op := range item.Operations() {
			for _, m := range template.FindAllStringSubmatch(path, -1) {
				p := op.Parameters.GetByInAndName("path", m[1])
				if p == nil || !p.Required {
					t.Errorf("%s %s does not declare its required path parameter %s", method, path, m[1])
				}
			}
		}
	}
}
