package httpapi

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oapiCodegen is the client generator the document is held to, pinned.
const oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// A typed client generated from docs/openapi.yaml by a generator the
// project did not write drives the served API: a change to the document
// that breaks client generation, or that the API does not keep, fails
// here. The client's module is built in a temporary directory; the Go module
// proxy must be reachable (it is in CI, where this test never skips).
func TestGeneratedClientAgainstTheService(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated client")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to generate the client")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.yaml"), []byte("package: plantclient\ngenerate:\n  client: true\n  models: true\noutput: client.gen.go\n"))
	writeFile(t, filepath.Join(dir, "go.mod"), []byte("module plantclient\n\ngo 1.26\n"))
	writeFile(t, filepath.Join(dir, "client_test.go"), []byte(generatedClientTest))
	spec, err := filepath.Abs("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	goCmd := func(env []string, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), "GOFLAGS=-mod=mod"), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			msg := "go " + strings.Join(args, " ") + ": " + err.Error() + "\n" + string(out)
			if os.Getenv("CI") != "true" && strings.Contains(string(out), "dial tcp") {
				t.Skip("the Go module proxy cannot be reached: " + msg)
			}
			t.Fatal(msg)
		}
	}
	goCmd(nil, "run", oapiCodegen, "-config", "config.yaml", spec)
	goCmd(nil, "mod", "tidy")

	s := startServer(t)
	goCmd([]string{"PLANTSTORE_API=" + s.url, "PLANTSTORE_TOKEN=" + s.token(t, nil)}, "test", "-count=1", ".")
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// generatedClientTest runs in the generated client's package.
const generatedClientTest = `package plantclient

import (
	"context"
	"net/http"
	"os"
	"testing"
)

func TestClient(t *testing.T) {
	ctx := context.Background()
	token := os.Getenv("PLANTSTORE_TOKEN")
	withToken := WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	})
	c, err := NewClientWithResponses(os.Getenv("PLANTSTORE_API"), withToken)
	if err != nil {
		t.Fatal(err)
	}
	anonymous, err := NewClientWithResponses(os.Getenv("PLANTSTORE_API"))
	if err != nil {
		t.Fatal(err)
	}
	tag := "aroid"
	plant := NewPlant{Id: 7, Name: "Monstera deliciosa", Tag: &tag}

	created, err := c.CreatePlantWithResponse(ctx, nil, plant)
	if err != nil || created.StatusCode() != 200 || created.JSON200 == nil || created.JSON200.Name != plant.Name || *created.JSON200.Tag != tag {
		t.Fatalf("create: %v %v", created, err)
	}
	replayed, err := c.CreatePlantWithResponse(ctx, nil, plant)
	if err != nil || replayed.StatusCode() != 200 || replayed.JSON200.Name != plant.Name {
		t.Fatalf("replay: %v %v", replayed, err)
	}
	plant.Name = "Monstera adansonii"
	conflict, err := c.CreatePlantWithResponse(ctx, nil, plant)
	if err != nil || conflict.StatusCode() != 409 || conflict.JSON409 == nil || conflict.JSON409.Error != ErrorErrorConflict {
		t.Fatalf("conflict: %v %v", conflict, err)
	}
	refused, err := anonymous.CreatePlantWithResponse(ctx, nil, plant)
	if err != nil || refused.StatusCode() != 401 || refused.JSON401 == nil || refused.JSON401.Error != ErrorErrorMissingToken {
		t.Fatalf("no token: %v %v", refused, err)
	}

	got, err := c.GetPlantWithResponse(ctx, 7, nil)
	if err != nil || got.StatusCode() != 200 || got.JSON200 == nil || got.JSON200.Id != 7 || got.JSON200.Name != "Monstera deliciosa" {
		t.Fatalf("read: %v %v", got, err)
	}
	limit := int32(10)
	page, err := c.ListPlantsWithResponse(ctx, &ListPlantsParams{Limit: &limit, Tag: &tag})
	if err != nil || page.StatusCode() != 200 || page.JSON200 == nil || len(*page.JSON200) != 1 || (*page.JSON200)[0].Id != 7 {
		t.Fatalf("list: %v %v", page, err)
	}
	deleted, err := c.DeletePlantWithResponse(ctx, 7, nil)
	if err != nil || deleted.StatusCode() != 204 {
		t.Fatalf("delete: %v %v", deleted, err)
	}
	gone, err := c.GetPlantWithResponse(ctx, 7, nil)
	if err != nil || gone.StatusCode() != 404 || gone.JSON404 == nil || gone.JSON404.Error != ErrorErrorNoSuchPlant {
		t.Fatalf("read after delete: %v %v", gone, err)
	}
}
`
