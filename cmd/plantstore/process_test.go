package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plantstore/plantstore/adapters/jwtauth/jwttest"
)

// The process tests run the real binary as an operator does: configured by
// its environment, stopped by signals, restarted on the same database. The
// binary is built once per test run, by the first test that needs it.

// binaryDir holds the binary the process tests built, if any.
var binaryDir string

// TestMain removes the binary the process tests built, once every test has
// run; a package whose tests start no process builds nothing.
func TestMain(m *testing.M) {
	code := m.Run()
	if binaryDir != "" {
		_ = os.RemoveAll(binaryDir)
	}
	os.Exit(code)
}

// serviceBinary builds this command, once, with the race detector when the
// tests themselves run with it, so that a race in a signal path is caught too.
var serviceBinary = sync.OnceValues(func() (string, error) {
	var err error
	if binaryDir, err = os.MkdirTemp("", "plantstore-process-test-"); err != nil {
		return "", err
	}
	path := filepath.Join(binaryDir, "plantstore")
	args := []string{"build", "-o", path}
	if bi, ok := debug.ReadBuildInfo(); ok && slices.Contains(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"}) {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build (the go command is needed to build the service): %v\n%s", err, out)
	}
	return path, nil
})

// buildBinary is the path of the binary the process tests run.
func buildBinary(t *testing.T) string {
	t.Helper()
	path, err := serviceBinary()
	require.NoError(t, err)
	return path
}

// process is one running plantstore binary.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer // the JSON log, and what the command prints on failure
	exited         chan struct{}
	state          *os.ProcessState // set when exited is closed
	api, admin     string           // base URLs, once listening
	signalled      time.Time        // when the last signal was sent
}

// launch starts `plantstore serve` with the given settings on top of
// jwttest's HS256 secret (the same for every process, so that a token stays
// good across a restart) and listeners on free loopback ports. It does not
// wait for the service to be ready. The process is killed when the test
// ends, if it is still running.
func launch(t *testing.T, env map[string]string) *process {
	t.Helper()
	bin := buildBinary(t)
	cmd := exec.Command(bin, "serve")
	cmd.Env = serviceEnv(t, env)
	p := &process{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		_ = cmd.Wait() // the exit status is read from ProcessState
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if strings.Contains(p.stderr.String(), "WARNING: DATA RACE") {
			t.Errorf("the service reported a data race:\n%s", p.stderr.String())
		}
		if t.Failed() {
			t.Logf("service output:\n%s", p.output())
		}
	})
	return p
}

// serviceEnv is the environment launch runs the service with: env on top
// of jwttest's HS256 secret and listeners on free loopback ports, and of
// the test's own environment without its settings.
func serviceEnv(t *testing.T, env map[string]string) []string {
	t.Helper()
	secretFile, _ := jwttest.New(t).Files(t)
	vars := map[string]string{
		"PLANTSTORE_ADDR":            "127.0.0.1:0",
		"PLANTSTORE_ADMIN_ADDR":      "127.0.0.1:0",
		"PLANTSTORE_JWT_SECRET_FILE": secretFile,
		"PLANTSTORE_LOG_LEVEL":       "info",
	}
	maps.Copy(vars, env)
	var out []string
	for _, kv := range os.Environ() {
		// Settings come from the test alone, not from the shell running it.
		if !strings.HasPrefix(kv, "PLANTSTORE_") && !strings.HasPrefix(kv, "GOGC=") {
			out = append(out, kv)
		}
	}
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

// startProcess launches the service on databaseURL and waits until its
// listeners are up and it reports ready.
func startProcess(t *testing.T, databaseURL string, env map[string]string) *process {
	t.Helper()
	vars := map[string]string{"PLANTSTORE_DATABASE_URL": databaseURL}
	maps.Copy(vars, env)
	p := launch(t, vars)
	p.await(t, "to listen", func() bool {
		p.readListeners()
		return p.api != "" && p.admin != ""
	})
	p.await(t, "to be ready", func() bool { status, _ := adminGet(p.admin, "/readyz"); return status == http.StatusOK })
	return p
}

// adminClient asks the admin listeners of the services, on a connection
// per request, so that no connection outlives a process.
var adminClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// adminGet fetches path from the admin listener at base; status 0 is no
// answer.
func adminGet(base, path string) (status int, body string) {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return 0, ""
	}
	if a := exchange(nil, adminClient, nil, req); a.err == nil {
		return a.status, a.body
	}
	return 0, ""
}

// await waits for a starting process to come to a state, and fails the test
// at once if the process exits first.
func (p *process) await(t *testing.T, what string, state func() bool) {
	t.Helper()
	require.Eventually(t, func() bool { return p.hasExited() || state() }, time.Minute, 20*time.Millisecond,
		"the service did not come %s (its output follows)", what)
	if p.hasExited() {
		t.Fatalf("the service exited (%v) before it came %s (its output follows)", p.state, what)
	}
}

// hasExited reports whether the process has exited.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// readListeners finds the addresses in the "listening" log lines.
func (p *process) readListeners() {
	for _, line := range strings.Split(p.stdout.String(), "\n") {
		var entry struct {
			Msg      string `json:"msg"`
			Listener string `json:"listener"`
			Addr     string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &entry) != nil || entry.Msg != "listening" {
			continue
		}
		switch entry.Listener {
		case "api":
			p.api = "http://" + entry.Addr
		case "admin":
			p.admin = "http://" + entry.Addr
		}
	}
}

// signal sends sig to the process and notes when.
func (p *process) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	p.signalled = time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Errorf("send %v: %v", sig, err)
	}
}

// waitExit waits at most within, counted from the last signal (or from
// now), for the process to exit, and returns its state. It fails the test
// if the process is still running then.
func (p *process) waitExit(t *testing.T, within time.Duration) *os.ProcessState {
	t.Helper()
	from := p.signalled
	if from.IsZero() {
		from = time.Now()
	}
	select {
	case <-p.exited:
		return p.state
	case <-time.After(time.Until(from.Add(within))):
		t.Fatalf("the service was still running %s after it was told to stop (its output follows)", within)
		return nil
	}
}

// killedBy reports whether the process ended by sig.
func killedBy(state *os.ProcessState, sig syscall.Signal) bool {
	ws, ok := state.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// output is what the process wrote, for failure messages, without the
// access log lines, which would bury the rest.
func (p *process) output() string {
	var b strings.Builder
	requests := 0
	for _, line := range strings.SplitAfter(p.stdout.String(), "\n") {
		if strings.Contains(line, `"msg":"request"`) {
			requests++
			continue
		}
		b.WriteString(line)
	}
	return fmt.Sprintf("--- stdout (%d access log lines left out)\n%s--- stderr\n%s", requests, b.String(), p.stderr.String())
}
