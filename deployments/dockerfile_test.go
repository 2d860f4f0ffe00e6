package deployments_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// --- Dockerfile ---

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, COPY, ...
	args string
}

// parseDockerfile splits a Dockerfile into build stages.
func parseDockerfile(t *testing.T, path string) [][]instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stages [][]instruction
	var line strings.Builder
	for _, raw := range strings.Split(string(data), "\n") {
		text := strings.TrimSpace(raw)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if rest, ok := strings.CutSuffix(text, "\\"); ok {
			line.WriteString(rest + " ")
			continue
		}
		line.WriteString(text)
		cmd, args, _ := strings.Cut(line.String(), " ")
		line.Reset()
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			t.Fatalf("%s: %s before FROM", path, in.cmd)
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	if len(stages) < 2 {
		t.Fatalf("%s: want a build stage and a runtime stage", path)
	}
	return stages
}

// execForm decodes a JSON-array instruction such as ENTRYPOINT ["/plantstore"].
func execForm(t *testing.T, in instruction) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(in.args), &argv); err != nil {
		t.Errorf("%s %s: want the exec form, a JSON array", in.cmd, in.args)
	}
	return argv
}

// copyArgs splits a COPY into its sources and its destination, flags dropped.
func copyArgs(in instruction) (sources []string, dest string) {
	var fields []string
	for _, f := range strings.Fields(in.args) {
		if !strings.HasPrefix(f, "--") {
			fields = append(fields, f)
		}
	}
	if len(fields) < 2 {
		return nil, ""
	}
	return fields[:len(fields)-1], fields[len(fields)-1]
}

// goDirs are the top-level directories holding the packages the binary is
// built from (as go list reports its dependencies), which the image's build
// stage must copy. Code the binary does not import (the API client,
// the load tool) need not be in the image.
func goDirs(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./cmd/plantstore")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for dir := range strings.Lines(string(out)) {
		rel, err := filepath.Rel(root, strings.TrimSpace(dir))
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue // a module from the module cache
		}
		if top, _, _ := strings.Cut(rel, string(filepath.Separator)); !slices.Contains(dirs, top) {
			dirs = append(dirs, top)
		}
	}
	return dirs
}

func TestDeployDockerfileBuildsStaticBinary(t *testing.T) {
	stages := parseDockerfile(t, dockerfile)
	var run strings.Builder
	copied := map[string]bool{}
	for _, stage := range stages[:len(stages)-1] {
		for _, in := range stage {
			switch in.cmd {
			case "RUN":
				run.WriteString(in.args + "\n")
			case "COPY":
				sources, _ := copyArgs(in)
				for _, s := range sources {
					copied[strings.Trim(s, "/")] = true
				}
			}
		}
	}
	if !strings.Contains(run.String(), "CGO_ENABLED=0") || !strings.Contains(run.String(), "./cmd/plantstore") {
		t.Error("the build stage must build ./cmd/plantstore with CGO_ENABLED=0, for a static binary")
	}
	for _, dir := range goDirs(t) {
		if !copied[dir] {
			t.Errorf("the build stage does not copy %s/, which holds Go code", dir)
		}
	}
}

// runtimeImage is what the Dockerfile's last stage says about the image.
type runtimeImage struct {
	vars            map[string]string
	entrypoint, cmd []string
	user            string
	exposed         []int
	copiedFromBuild map[string]bool // destinations of COPY --from
}

func readRuntimeStage(t *testing.T, stage []instruction) runtimeImage {
	t.Helper()
	img := runtimeImage{vars: map[string]string{}, copiedFromBuild: map[string]bool{}}
	for _, in := range stage {
		switch in.cmd {
		case "ENV":
			for _, kv := range strings.Fields(in.args) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Errorf("ENV %s: want the KEY=value form", in.args)
				}
				img.vars[k] = strings.Trim(v, `"`)
			}
		case "EXPOSE":
			for _, p := range strings.Fields(in.args) {
				n, err := strconv.Atoi(strings.TrimSuffix(p, "/tcp"))
				if err != nil {
					t.Errorf("EXPOSE %s: %v", p, err)
				}
				img.exposed = append(img.exposed, n)
			}
		case "ENTRYPOINT":
			img.entrypoint = execForm(t, in)
		case "CMD":
			img.cmd = execForm(t, in)
		case "USER":
			img.user, _, _ = strings.Cut(in.args, ":")
		case "COPY":
			if strings.Contains(in.args, "--from=") {
				_, dest := copyArgs(in)
				img.copiedFromBuild[dest] = true
			}
		}
	}
	return img
}

func TestDeployDockerfileRuntimeImage(t *testing.T) {
	stages := parseDockerfile(t, dockerfile)
	img := readRuntimeStage(t, stages[len(stages)-1])
	checkVariables(t, "Dockerfile", img.vars, slices.Collect(maps.Keys(img.vars)))

	apiPort := listenPort(t, effective(t, img.vars, "PLANTSTORE_ADDR"))
	adminAddr := effective(t, img.vars, "PLANTSTORE_ADMIN_ADDR")
	checkReachable(t, "Dockerfile", adminAddr)
	want := []int{apiPort, listenPort(t, adminAddr)}
	slices.Sort(img.exposed)
	slices.Sort(want)
	if !slices.Equal(img.exposed, want) {
		t.Errorf("EXPOSE %v, want the listeners' ports %v", img.exposed, want)
	}
	if len(img.entrypoint) != 1 || !img.copiedFromBuild[img.entrypoint[0]] {
		t.Errorf("ENTRYPOINT %q, want the binary copied from the build stage alone", img.entrypoint)
	}
	if !slices.Equal(img.cmd, []string{"serve"}) {
		t.Errorf("CMD %q, want [\"serve\"]", img.cmd)
	}
	if img.user == "" || img.user == "root" || img.user == "0" {
		t.Errorf("the runtime stage runs as %q; want a non-root USER", img.user)
	}
}
