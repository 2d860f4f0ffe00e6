package oapi

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/docs/codegentest"
)

// The committed client is what the pinned generator makes of the document
// today: a change to docs/openapi.yaml without `go generate ./...` fails here.
// The generator is the one doc.go's go:generate line runs, fetched through
// the Go module proxy; where it cannot be fetched the test skips, except under
// CI=true, where it fails.
func TestClientMatchesTheDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the client generator")
	}
	pkg, args := generateLine(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	oapiCodegen := codegentest.Build(ctx, t, pkg)
	out := filepath.Join(t.TempDir(), "client.gen.go")
	gen := exec.CommandContext(ctx, oapiCodegen, withOutput(t, args, out)...)
	if b, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("client.gen.go is not what the generator makes of docs/openapi.yaml: run `go generate ./...` and commit it\n%s", firstDifference(got, want))
	}
}

// generateLine is the generator's package (path@version) and arguments that
// doc.go's go:generate line runs with `go run`.
func generateLine(t *testing.T) (string, []string) {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(src), "\n") {
		rest, ok := strings.CutPrefix(line, "//go:generate ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 4 || f[0] != "go" || f[1] != "run" || !strings.Contains(f[2], "/oapi-codegen@v") {
			t.Fatalf("doc.go's go:generate line is not `go run .../oapi-codegen@vX.Y.Z ...`: %q", line)
		}
		return f[2], f[3:]
	}
	t.Fatal("doc.go has no go:generate line")
	return "", nil
}

// withOutput is args with the value of -o replaced by out.
func withOutput(t *testing.T, args []string, out string) []string {
	t.Helper()
	a := append([]string(nil), args...)
	for i := range len(a) - 1 {
		if a[i] == "-o" {
			a[i+1] = out
			return a
		}
	}
	t.Fatalf("the go:generate line names no -o file: %q", args)
	return nil
}

// firstDifference shows the first line where got and want part.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n- committed: %s\n+ generated: %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("committed %d lines, generated %d", len(g), len(w))
}
