// Package deployments_test holds the files in this directory to the binary
// they deploy: every PLANTSTORE_* variable must be a setting of
// `plantstore serve` with a value it accepts, and ports, probes, commands and
// shutdown timing must agree with what serve and migrate actually do. The
// settings come from the binary itself (`plantstore settings`), so these
// checks cannot drift from it. Nothing here needs Docker or a cluster.
package deployments_test

import (
	"bufio"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// repoRoot is the repository root, seen from this directory.
const repoRoot = ".."

var (
	kubernetesBase = filepath.Join("kubernetes", "base")
	composeFile    = "compose.yaml"
	dockerfile     = "Dockerfile"
)

// The paths the admin listener must serve to the probes.
const (
	livenessPath  = "/healthz"
	readinessPath = "/readyz"
)

// binary is the plantstore command, built once for every test here.
var binary struct {
	once sync.Once
	path string
	err  error
}

func plantstore(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "plantstore-deployments-test-")
		if err != nil {
			binary.err = err
			return
		}
		binary.path = filepath.Join(dir, "plantstore")
		cmd := exec.Command("go", "build", "-o", binary.path, "./cmd/plantstore")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary.path != "" {
		os.RemoveAll(filepath.Dir(binary.path))
	}
	os.Exit(code)
}

// settingsOf runs `plantstore settings` with the PLANTSTORE_* variables of
// vars alone and returns the value serve would take for every setting, or
// serve's one-line refusal. It prints NAME=value  # where it came from.
func settingsOf(t *testing.T, vars map[string]string) (map[string]string, error) {
	t.Helper()
	cmd := exec.Command(plantstore(t), "settings")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range vars {
		if strings.HasPrefix(k, "PLANTSTORE_") {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("%s", strings.TrimSpace(string(ee.Stderr)))
		}
		t.Fatal(err)
	}
	values := map[string]string{}
	lines := bufio.NewScanner(strings.NewReader(string(out)))
	for lines.Scan() {
		name, rest, ok := strings.Cut(lines.Text(), "=")
		value, _, noted := strings.Cut(rest, "  # ")
		if !ok || !noted {
			t.Fatalf("plantstore settings printed %q, want NAME=value  # note", lines.Text())
		}
		values[name] = value
	}
	return values, nil
}

// keyVariables are the settings of which serve needs one: a token key.
var keyVariables = []string{"PLANTSTORE_JWT_SECRET_FILE", "PLANTSTORE_JWT_PUBLIC_KEY_FILE", "PLANTSTORE_JWKS_URL"}

// withKey is vars with a placeholder token key when they name none: the
// variables of a container that does not run serve (migrate), or of an
// image whose key is given where it runs. serveChecks holds the containers
// that run serve to a key of their own.
func withKey(vars map[string]string) map[string]string {
	for _, k := range keyVariables {
		if vars[k] != "" {
			return vars
		}
	}
	out := map[string]string{"PLANTSTORE_JWT_SECRET_FILE": "/run/secrets/placeholder"}
	maps.Copy(out, vars)
	return out
}

// checkVariables fails t unless every PLANTSTORE_* variable is a setting
// of plantstore serve and serve accepts the literal values together (with a
// key, when they name none: see withKey). Other variables (GOMEMLIMIT,
// POSTGRES_*) are not the binary's business.
func checkVariables(t *testing.T, where string, vars map[string]string, names []string) {
	t.Helper()
	known, err := settingsOf(t, withKey(nil))
	if err != nil {
		t.Fatalf("plantstore settings with no variables but a key: %v", err)
	}
	for _, name := range names {
		if _, ok := known[name]; strings.HasPrefix(name, "PLANTSTORE_") && !ok {
			t.Errorf("%s: %s is not a setting of plantstore serve", where, name)
		}
	}
	if _, err := settingsOf(t, withKey(vars)); err != nil {
		t.Errorf("%s: serve refuses the values: %v", where, err)
	}
}

// serveChecks fails t unless serve accepts the literal variables of a
// container that runs it as they are: a key included.
func serveChecks(t *testing.T, where string, vars map[string]string) {
	t.Helper()
	if _, err := settingsOf(t, vars); err != nil {
		t.Errorf("%s: serve refuses its configuration: %v", where, err)
	}
}

// effective is the value a setting takes given the literal variables of a
// manifest: the manifest's, else the default.
func effective(t *testing.T, vars map[string]string, env string) string {
	t.Helper()
	values, err := settingsOf(t, withKey(vars))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := values[env]
	if !ok {
		t.Fatalf("%s is not a setting", env)
	}
	return v
}

func effectiveDuration(t *testing.T, vars map[string]string, env string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(effective(t, vars, env))
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return d
}

// migratesAtStart reports whether serve applies the migrations itself.
func migratesAtStart(t *testing.T, vars map[string]string) bool {
	t.Helper()
	v := effective(t, vars, "PLANTSTORE_MIGRATE")
	b, err := strconv.ParseBool(v)
	if err != nil {
		t.Fatalf("PLANTSTORE_MIGRATE=%q: %v", v, err)
	}
	return b
}

// listenPort is the port of a listener address such as ":8080".
func listenPort(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return n
}

// checkReachable fails t when the admin listener would bind only loopback
// inside a container, where neither probes nor Prometheus can reach it.
func checkReachable(t *testing.T, where, addr string) {
	t.Helper()
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		t.Errorf("%s: admin listener %q is loopback only; set PLANTSTORE_ADMIN_ADDR=:PORT", where, addr)
	}
}
