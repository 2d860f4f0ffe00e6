package docs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plantstore/plantstore/docs"
	"github.com/plantstore/plantstore/docs/codegentest"
)

// generatingPage is the page that tells outside users how to generate a Go
// client from the document.
const generatingPage = "generating-a-client.md"

// The page's steps, config and program, taken from the page itself, make a
// client of the document that builds and passes go vet. Without the config's
// skip-prune, oapi-codegen v2.8.2's code stops at `undefined: WebhookID`
// (and WebhookTimestamp, WebhookSignature, EventEnvelope), so this fails
// when that line goes. The generator is fetched through the Go module proxy
// as in client/internal/oapi: where it cannot be, the test skips, except
// under CI=true, where it fails.
func TestGeneratingAClientAsThePageSays(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the client generator")
	}
	page, err := os.ReadFile(generatingPage)
	if err != nil {
		t.Fatal(err)
	}
	steps := fencedBlock(t, string(page), "sh")
	module := commandArgs(t, steps, "go mod init")
	if len(module) != 1 {
		t.Fatalf("%s: `go mod init` names no single module: %q", generatingPage, module)
	}
	generator := commandArgs(t, steps, "go run")
	if len(generator) < 2 || !strings.Contains(generator[0], "/oapi-codegen@v") {
		t.Fatalf("%s: the `go run` line is not `go run .../oapi-codegen@vX.Y.Z ...`: %q", generatingPage, generator)
	}
	pkg, args := generator[0], generator[1:]
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to build the client")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	oapiCodegen := codegentest.Build(ctx, t, pkg)

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, argAfter(t, args, "-config")), fencedBlock(t, string(page), "yaml"))
	writeFile(t, filepath.Join(dir, args[len(args)-1]), string(docs.OpenAPI))
	writeFile(t, filepath.Join(dir, "main.go"), fencedBlock(t, string(page), "go"))
	run := func(name string, arg ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, arg...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(arg, " "), err, out)
		}
	}
	run(goTool, "mod", "init", module[0])
	// The runtime at this module's version, already in the module cache, so
	// that tidy asks the proxy for no newer one.
	run(goTool, "mod", "edit", "-require=github.com/oapi-codegen/runtime@"+requiredVersion(t, "github.com/oapi-codegen/runtime"))
	run(oapiCodegen, args...)
	run(goTool, "mod", "tidy")
	run(goTool, "build", "./...")
	run(goTool, "vet", "./...")
}

// fencedBlock is the text of the page's one code block fenced as lang.
func fencedBlock(t *testing.T, page, lang string) string {
	t.Helper()
	var blocks []string
	var block strings.Builder
	inside := false
	for line := range strings.SplitSeq(page, "\n") {
		switch {
		case !inside && line == "```"+lang:
			inside = true
			block.Reset()
		case inside && line == "```":
			inside = false
			blocks = append(blocks, block.String())
		case inside:
			block.WriteString(line + "\n")
		}
	}
	if len(blocks) != 1 {
		t.Fatalf("%s has %d ```%s blocks, want 1", generatingPage, len(blocks), lang)
	}
	return blocks[0]
}

// commandArgs is the arguments of the shell line that starts with command,
// its comment left out.
func commandArgs(t *testing.T, steps, command string) []string {
	t.Helper()
	for line := range strings.SplitSeq(steps, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), command+" "); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("%s: no `%s` line", generatingPage, command)
	return nil
}

// argAfter is the value that follows flag in args.
func argAfter(t *testing.T, args []string, flag string) string {
	t.Helper()
	for i := range len(args) - 1 {
		if args[i] == flag {
			return args[i+1]
		}
	}
	t.Fatalf("%s: the generator is run without %s: %q", generatingPage, flag, args)
	return ""
}

// requiredVersion is the version of module that this repository's go.mod
// requires.
func requiredVersion(t *testing.T, module string) string {
	t.Helper()
	src, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(src), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	t.Fatalf("go.mod does not require %s", module)
	return ""
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
