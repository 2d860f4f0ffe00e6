// Package referencetest drives the API reference page (Swagger UI, served
// at /docs) in headless Chromium for tests: it opens the page, lists the
// operations it shows, authorizes with a token, runs "Try it out" and reads
// the answer the page shows, and notes every console error, failed load,
// request to another host and unsuccessful answer on the way.
package referencetest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// BrowserEnv names the browser to drive when it is not on PATH.
const BrowserEnv = "PLANTSTORE_TEST_BROWSER"

// Find returns the path of Chromium: PLANTSTORE_TEST_BROWSER, else the
// first of the usual names on PATH. Without one the test is skipped, except
// under CI=true, where it fails.
func Find(t testing.TB) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	if p := os.Getenv(BrowserEnv); p != "" {
		names = []string{p}
	}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no browser: install Debian's chromium package or set " + BrowserEnv + " (tried " + strings.Join(names, ", ") + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Browser is one headless Chromium tab and what it saw: console errors,
// requests, failed loads and the statuses of the answers.
type Browser struct {
	ctx  context.Context // the tab; steps run under a deadline derived from it
	base *url.URL        // the service

	mu        sync.Mutex
	problems  []string // console errors, exceptions, failed loads, other hosts
	reported  bool     // ExpectCleanRun has reported the problems
	requests  map[network.RequestID]string
	responses map[string]int64
}

// stepTimeout bounds each step; a step waits for elements, never sleeps.
// It only ends a run that is stuck, so it is wide: on a loaded 2-core
// machine Chromium took 14 s to start and a load of the page up to 15 s.
const stepTimeout = 2 * time.Minute

func Start(t testing.TB, path, base string) *Browser {
	t.Helper()
	baseURL, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var output syncBuffer
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		// The closed network would otherwise fill the run with refused
		// connections to Google's services.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 960),
		chromedp.CombinedOutput(&output),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	b := &Browser{ctx: ctx, base: baseURL, requests: map[network.RequestID]string{}, responses: map[string]int64{}}
	start := time.Now()
	if err := chromedp.Do(ctx); err != nil { // starts the browser with no deadline
		t.Fatalf("starting %s: %v\n%s", path, err, output.String())
	}
	if err := chromedp.Listen(ctx, b.observe); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s started in %v", path, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		b.SaveScreenshot(t, filepath.Join(t.ArtifactDir(), "reference-page.png"))
		b.mu.Lock()
		defer b.mu.Unlock()
		if !b.reported {
			t.Logf("the page's problems so far: %q", b.problems)
		}
		out := output.String()
		t.Logf("the browser's output (end):\n%s", out[max(0, len(out)-2000):])
	})
	return b
}

// observe records what the tab does. It runs on the tab's reading goroutine,
// so it only notes and returns.
func (b *Browser) observe(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests[ev.RequestID] = ev.Request.URL
		if !b.sameOrigin(ev.Request.URL) {
			b.problems = append(b.problems, "request to another host: "+ev.Request.Method+" "+ev.Request.URL)
		}
	case *network.EventResponseReceived:
		b.responses[ev.Response.URL] = ev.Response.Status
	case *network.EventLoadingFailed:
		b.problems = append(b.problems, fmt.Sprintf("load failed: %s %s %s", b.requests[ev.RequestID], ev.ErrorText, ev.BlockedReason))
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, cmp.Or(a.Description, string(a.Value)))
			}
			b.problems = append(b.problems, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		b.problems = append(b.problems, "exception: "+text)
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			b.problems = append(b.problems, "browser log: "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	}
}

// sameOrigin reports whether a request goes to the service. Data and blob
// URLs are the page's own content, not requests to a host.
func (b *Browser) sameOrigin(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "data", "blob":
		return true
	}
	return u.Scheme == b.base.Scheme && u.Host == b.base.Host
}

// do runs steps under the step deadline and fails t with what went wrong.
func (b *Browser) do(t testing.TB, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	for i, step := range steps {
		if err := chromedp.Do(ctx, step); err != nil {
			t.Fatalf("%s, step %d of %d: %v", what, i+1, len(steps), err)
		}
	}
}

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](t testing.TB, b *Browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// SaveScreenshot writes a PNG of the tab's viewport to path.
func (b *Browser) SaveScreenshot(t testing.TB, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(path, png, 0o644)
	}
	if err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	t.Logf("screenshot of the page: %s", path)
}

// ExpectCleanRun fails t for every console error, exception, failed load or
// request to another host seen, and for any answer that was not a success.
func (b *Browser) ExpectCleanRun(t testing.TB) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reported = true
	for _, p := range b.problems {
		t.Errorf("the page: %s", p)
	}
	for u, status := range b.responses {
		if status/100 != 2 {
			t.Errorf("the page got %d for %s", status, u)
		}
	}
	if len(b.responses) == 0 {
		t.Error("the page made no request")
	}
}

// syncBuffer collects the browser's output, written from its own goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
