package openapitest

import (
	"net/http"
	"slices"
)

// Operations lists every path of the document, as its template
// ("/plants/{id}"), with the methods it has an operation for, in upper case
// and sorted. A test holds a router to it: every documented operation
// routed, and the Allow header of a path listing these methods.
func (c *Contract) Operations() map[string][]string {
	ops := map[string][]string{}
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			ops[path] = append(ops[path], method)
		}
		slices.Sort(ops[path])
	}
	return ops
}

// Route is the path template of the document's operation for method on
// path, a path as a client sends it ("/plants/1"), and whether the document
// has that operation at all: the other half of holding a router to the
// document, every route an operation.
func (c *Contract) Route(method, path string) (template string, ok bool) {
	req, err := http.NewRequest(method, path, nil)
	if err != nil {
		return "", false
	}
	route, _, err := c.router.FindRoute(pathOnly(req))
	if err != nil {
		return "", false
	}
	return route.Path, true
}
