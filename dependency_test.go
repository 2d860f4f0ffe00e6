// Package plantstore_test checks the dependency rule of the hexagon from the
// import graph, so that it cannot rot: the domain imports the standard
// library only, the application only the domain, adapters never each other
// nor cmd, only cmd knows every adapter, and the generated API client
// imports nothing of the service and is used by tests only.
package plantstore_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/plantstore/plantstore"

type pkg struct {
	path        string // import path
	imports     []string
	testImports []string
}

func loadPackages(t *testing.T) []pkg {
	t.Helper()
	var pkgs []pkg
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); dir != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		// A directory with a go.mod of its own (tools/benche2e) is another
		// module, not part of this one.
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && dir != "." {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			return nil // no Go files here
		}
		path := module
		if dir != "." {
			path += "/" + filepath.ToSlash(dir)
		}
		pkgs = append(pkgs, pkg{path: path, imports: p.Imports, testImports: append(p.TestImports, p.XTestImports...)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func isStd(path string) bool { return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") }

func within(path, dir string) bool {
	return path == module+"/"+dir || strings.HasPrefix(path, module+"/"+dir+"/")
}

// adapterOf names the adapter a package belongs to: "postgres" for
// adapters/postgres and adapters/postgres/pgtest.
func adapterOf(path string) string {
	rest, ok := strings.CutPrefix(path, module+"/adapters/")
	if !ok {
		return ""
	}
	return strings.SplitN(rest, "/", 2)[0]
}

// sharedTestSuites may be imported by any adapter's tests.
var sharedTestSuites = map[string]bool{
	module + "/adapters/storetest":           true,
	module + "/adapters/postgres/pgtest":     true,
	module + "/docs/openapitest":             true,
	module + "/adapters/memory":              true,
	module + "/adapters/jwtauth/jwttest":     true,
	module + "/adapters/webhook/webhooktest": true,
	module + "/adapters/tracing/otlptest":    true,
}

// generatorBuild builds the client generator: the client's tests may use it,
// since it holds nothing of the service.
const generatorBuild = module + "/docs/codegentest"

// testStore is the store that tests of the application use: the in-memory
// adapter, which passes the same store suite as the real ones.
const testStore = module + "/adapters/memory"

func TestDependencyRule(t *testing.T) {
	pkgs := loadPackages(t)
	if len(pkgs) < 5 {
		t.Fatalf("found only %d packages; is the test running from the module root?", len(pkgs))
	}
	for _, p := range pkgs {
		check := func(imp string, test bool) {
			switch {
			case within(p.path, "domain"):
				if !isStd(imp) && !(test && within(imp, "domain")) {
					t.Errorf("%s imports %s: the domain imports the standard library only", p.path, imp)
				}
			case within(p.path, "application"):
				if !isStd(imp) && !within(imp, "domain") && !within(imp, "application") && !(test && imp == testStore) {
					t.Errorf("%s imports %s: the application imports the domain only", p.path, imp)
				}
			case within(p.path, "client"):
				if strings.HasPrefix(imp, module+"/") && !within(imp, "client") && !(test && imp == generatorBuild) {
					t.Errorf("%s imports %s: the API client imports nothing of the service", p.path, imp)
				}
			case within(p.path, "adapters"):
				if within(imp, "cmd") {
					t.Errorf("%s imports %s: adapters never import cmd", p.path, imp)
				}
				other := adapterOf(imp)
				if other != "" && other != adapterOf(p.path) && other != "internal" && !(test && sharedTestSuites[imp]) {
					t.Errorf("%s imports %s: adapters never import each other", p.path, imp)
				}
			}
		}
		for _, imp := range p.imports {
			check(imp, false)
			// The client is for the API's callers; the service's own code
			// never calls itself through it, only tests do.
			if within(imp, "client") && !within(p.path, "client") {
				t.Errorf("%s imports %s: only tests use the API client", p.path, imp)
			}
		}
		for _, imp := range p.testImports {
			check(imp, true)
		}
	}
}

// TestOnlyCmdWiresAdapters keeps the knowledge of every adapter in one place.
func TestOnlyCmdWiresAdapters(t *testing.T) {
	for _, p := range loadPackages(t) {
		if within(p.path, "cmd") || within(p.path, "adapters") {
			continue
		}
		for _, imp := range p.imports {
			if within(imp, "adapters") {
				t.Errorf("%s imports %s: only cmd wires adapters", p.path, imp)
			}
		}
	}
}

// testSupport are the packages that exist for tests: fresh databases, the
// primary and standby of the failover tests, a faulty link to a server,
// tokens, receivers, collectors, the contract and the store suite. Only
// tests and other test support import them, so that none of their servers
// or shortcuts ships.
var testSupport = map[string]bool{
	module + "/adapters/postgres/pgtest":       true,
	module + "/adapters/postgres/pgcluster":    true,
	module + "/adapters/postgres/pgproxy":      true,
	module + "/adapters/jwtauth/jwttest":       true,
	module + "/adapters/webhook/webhooktest":   true,
	module + "/adapters/tracing/otlptest":      true,
	module + "/adapters/storetest":             true,
	module + "/adapters/httpapi/referencetest": true,
	module + "/docs/openapitest":               true,
	module + "/docs/codegentest":               true,
}

func TestTestSupportIsImportedByTestsOnly(t *testing.T) {
	for _, p := range loadPackages(t) {
		if testSupport[p.path] {
			continue
		}
		for _, imp := range p.imports {
			if testSupport[imp] {
				t.Errorf("%s imports %s: test support is for tests only", p.path, imp)
			}
		}
	}
}
