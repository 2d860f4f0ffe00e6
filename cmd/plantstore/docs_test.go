package main

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"net/http"
	"net/textproto"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/adapters/httpapi"
	"github.com/plantstore/plantstore/adapters/postgres"
	"github.com/plantstore/plantstore/docs/openapitest"
)

// The documents state what the code does; these tests hold the statements
// that drift most easily (settings, defaults, the pool's rule, the use
// cases) to the code.

// readDoc is a document of the repository, from its root.
func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tableRows are the rows of the first table after heading in doc, each
// split into its cells.
func tableRows(t *testing.T, doc, heading string) [][]string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no heading %q", heading)
	}
	var rows [][]string
	for line := range strings.Lines(section) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "|---"):
			rows = append(rows, strings.Split(strings.Trim(line, "|"), "|"))
		case len(rows) > 0 && !strings.HasPrefix(line, "|"):
			return rows[1:] // the header row left out
		}
	}
	return rows[1:]
}

var backticked = regexp.MustCompile("`([^`]*)`")

// README's settings table lists every setting serve reads, one row each,
// with the default the code declares ("none" where it declares none), and
// names no setting that does not exist; GOGC's default is the service's.
func TestTheREADMEsSettingsTableListsEverySettingWithItsDefault(t *testing.T) {
	rows := tableRows(t, readDoc(t, "README.md"), "## Configuration")
	defaults := map[string]string{}
	for _, row := range rows {
		if len(row) != 3 {
			t.Fatalf("row %q: want variable, default, meaning", row)
		}
		names := backticked.FindAllStringSubmatch(row[0], -1)
		if len(names) != 1 {
			t.Errorf("row %q: want one variable a row", row[0])
			continue
		}
		def := strings.TrimSpace(row[1])
		if m := backticked.FindStringSubmatch(def); m != nil && strings.HasPrefix(def, "`") {
			def = m[1]
		} else if !strings.HasPrefix(def, "none") {
			def = "(text)"
		} else {
			def = ""
		}
		if _, twice := defaults[names[0][1]]; twice {
			t.Errorf("README's settings table lists %s twice", names[0][1])
		}
		defaults[names[0][1]] = def
	}
	for _, st := range (&config{}).settings().Settings() {
		def, ok := defaults[st.Env]
		switch {
		case !ok:
			t.Errorf("README's settings table lacks %s", st.Env)
		case def != st.Default:
			t.Errorf("README gives %s the default %q; the code's is %q", st.Env, def, st.Default)
		}
		delete(defaults, st.Env)
	}
	if def := defaults["GOGC"]; def != strconv.Itoa(defaultGCPercent) {
		t.Errorf("README gives GOGC the default %q; the service's is %d", def, defaultGCPercent)
	}
	for name := range defaults {
		if strings.HasPrefix(name, envPrefix) {
			t.Errorf("README's settings table lists %s, which is no setting", name)
		}
	}
}

// The documents give the PostgreSQL pool's auto size as the rule the store
// follows, max(N, M × GOMAXPROCS), and nowhere as a fixed number.
func TestTheDocumentsStateThePoolsRule(t *testing.T) {
	rule := regexp.MustCompile(`max\((\d+), (\d+) × GOMAXPROCS\)`)
	fixed := regexp.MustCompile(`\d+ PostgreSQL connections`)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, path := range []string{"README.md", "docs/security.md", "docs/operations.md"} {
		doc := readDoc(t, path)
		rules := rule.FindAllStringSubmatch(doc, -1)
		if len(rules) == 0 {
			t.Errorf("%s does not state the pool's rule", path)
		}
		for _, m := range rules {
			least, per := atoi(t, m[1]), atoi(t, m[2])
			for _, procs := range []int{1, 2, 3, 4, 8, 16} {
				runtime.GOMAXPROCS(procs)
				if got := postgres.DefaultMaxOpenConns(); got != max(least, per*procs) {
					t.Errorf("%s says %s; with GOMAXPROCS %d the pool is %d", path, m[0], procs, got)
				}
			}
		}
		if m := fixed.FindString(doc); m != "" {
			t.Errorf("%s says %q; the pool grows with the cores", path, m)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// docs/architecture.md names every use case, every store port and every
// HTTP adapter's use case port in its layer table and its diagram, and
// every operation on the plants in the HTTP adapter's row: a use case added
// without them fails here.
func TestTheArchitectureNamesEveryUseCase(t *testing.T) {
	doc := readDoc(t, "docs/architecture.md")
	_, diagram, _ := strings.Cut(doc, "```mermaid\n")
	diagram, _, _ = strings.Cut(diagram, "```")
	row := func(prefix string) string {
		for line := range strings.Lines(doc) {
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
		t.Fatalf("docs/architecture.md has no row %q", prefix)
		return ""
	}
	application, adapter := row("| application |"), row("| `adapters/httpapi` |")

	useCases, ports := applicationUseCasesAndPorts(t)
	var handlerPorts []string
	deps := reflect.TypeFor[httpapi.Deps]()
	for i := range deps.NumField() {
		if f := deps.Field(i); f.Type.Kind() == reflect.Interface && f.Type.PkgPath() == deps.PkgPath() {
			handlerPorts = append(handlerPorts, f.Type.Name())
		}
	}
	for _, name := range append(useCases, ports...) {
		if !strings.Contains(application, "`"+name+"`") {
			t.Errorf("the application row lacks %s", name)
		}
	}
	for _, name := range append(append(useCases, ports...), handlerPorts...) {
		if !strings.Contains(diagram, name) {
			t.Errorf("the diagram lacks %s", name)
		}
	}
	for path, methods := range openapitest.Load(t).Operations() {
		if !strings.HasPrefix(path, "/plants") {
			continue
		}
		for _, method := range methods {
			if method != http.MethodHead && !strings.Contains(adapter, "`"+method+" "+path+"`") {
				t.Errorf("the httpapi row lacks %s %s", method, path)
			}
		}
	}
}

// applicationUseCasesAndPorts reads package application: its use cases, the
// types that a New function returns a pointer to, and its store ports, the
// interfaces named Plant....
func applicationUseCasesAndPorts(t *testing.T) (useCases, ports []string) {
	t.Helper()
	files, err := os.ReadDir("../../application")
	if err != nil {
		t.Fatal(err)
	}
	fset := gotoken.NewFileSet()
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".go") || strings.HasSuffix(f.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, "../../application/"+f.Name(), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil || !strings.HasPrefix(d.Name.Name, "New") || d.Type.Results == nil {
					continue
				}
				if star, ok := d.Type.Results.List[0].Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok && "New"+id.Name == d.Name.Name {
						useCases = append(useCases, id.Name)
					}
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && strings.HasPrefix(ts.Name.Name, "Plant") {
						if _, ok := ts.Type.(*ast.InterfaceType); ok {
							ports = append(ports, ts.Name.Name)
						}
					}
				}
			}
		}
	}
	if len(useCases) == 0 || len(ports) == 0 {
		t.Fatalf("found use cases %v and ports %v in application", useCases, ports)
	}
	return useCases, ports
}

// README's curl examples show the headers they print as curl prints them:
// as the service sent them, and Go's HTTP/1.1 server sends every header
// name in its canonical form (Etag, not ETag).
func TestTheREADMEsCurlOutputSpellsHeadersAsSent(t *testing.T) {
	shown := regexp.MustCompile(`(?m)^# ([A-Z][A-Za-z-]*): `).FindAllStringSubmatch(readDoc(t, "README.md"), -1)
	if len(shown) == 0 {
		t.Fatal("README shows no header curl printed")
	}
	for _, m := range shown {
		if want := textproto.CanonicalMIMEHeaderKey(m[1]); m[1] != want {
			t.Errorf("README shows curl printing %s; the service sends %s", m[1], want)
		}
	}
}
