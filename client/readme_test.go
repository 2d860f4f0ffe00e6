package client_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The Go code of README.md's "Go client" is the body of the package's
// Example, which compiles with the tests: the README cannot show an API the
// client no longer has.
func TestReadmeShowsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Go client\n")
	if !ok {
		t.Fatal(`README.md has no "## Go client" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, code, ok := strings.Cut(section, "\n```go\n")
	if !ok {
		t.Fatal(`README.md's "Go client" has no go code block`)
	}
	code, _, _ = strings.Cut(code, "\n```\n")

	if want := exampleBody(t, "Example"); strings.TrimSpace(code) != want {
		t.Errorf("README.md's Go client code is not the body of Example in example_test.go; make it:\n%s", want)
	}
}

// exampleBody is the source of the body of the function name of
// example_test.go, one tab less indented.
func exampleBody(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_test.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name {
			body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
			lines := strings.Split(strings.Trim(body, "\n"), "\n")
			for i, l := range lines {
				lines[i] = strings.TrimPrefix(l, "\t")
			}
			return strings.Join(lines, "\n")
		}
	}
	t.Fatalf("example_test.go has no func %s", name)
	return ""
}
