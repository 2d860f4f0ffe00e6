// Package codegentest builds the OpenAPI client generator for the tests that
// check what it makes of the service's document: the committed client's and
// the one docs/generating-a-client.md tells outside users to generate.
package codegentest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Build installs the generator pkg (path@version) through the Go module
// proxy into a directory of the test's own and returns the binary's path.
// Where the generator cannot be fetched the test skips, except under
// CI=true, where it fails: CI must never pass without the check.
func Build(ctx context.Context, t testing.TB, pkg string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to build the generator")
	}
	bin := t.TempDir()
	install := exec.CommandContext(ctx, goTool, "install", pkg)
	install.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := install.CombinedOutput(); err != nil {
		msg := "go install " + pkg + ": " + err.Error() + ": " + strings.TrimSpace(string(out))
		if os.Getenv("CI") != "true" {
			t.Skip("the client generator cannot be fetched: " + strings.SplitN(msg, "\n", 2)[0])
		}
		t.Fatal(msg)
	}
	name := pkg[strings.LastIndex(pkg, "/")+1:]
	if at := strings.IndexByte(name, '@'); at >= 0 {
		name = name[:at]
	}
	return filepath.Join(bin, name)
}
