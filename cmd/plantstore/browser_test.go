package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/plantstore/plantstore/docs"
)

// browserEnv names the browser to drive when it is not on PATH.
const browserEnv = "PLANTSTORE_TEST_BROWSER"

// screenshotEnv, when set, is where TestReferencePageInABrowser saves a
// screenshot of the page after its create (README's docs/api-reference.png).
const screenshotEnv = "PLANTSTORE_SCREENSHOT"

// The API reference page in headless Chromium: it loads with no console
// error and no request to another host, lists every operation of the
// document, and with a token pasted in its Authorize dialog it creates a
// plant through "Try it out".
func TestReferencePageInABrowser(t *testing.T) {
	browserPath := findBrowser(t)
	s := startService(t, storeURLs()["sqlite"](t), nil)
	token := s.token(t, jwt.MapClaims{"scope": "plants:read plants:write"})
	b := startBrowser(t, browserPath, s.api)

	b.open(t, "/docs")
	b.expectOperations(t, documentedOperations(t))
	b.authorize(t, token)

	create := operation{tag: "plants", id: "createPlant"}
	status, body := b.tryIt(t, create, map[string]string{"X-Request-ID": "reference-page-create"},
		`{"id": 4242, "name": "Pilea peperomioides", "tag": "from the browser"}`)
	if plant, _ := body.(map[string]any); status != 200 || plant["name"] != "Pilea peperomioides" || plant["tag"] != "from the browser" {
		t.Fatalf("create from the page: %d %v", status, body)
	}
	// It reached the service with the token and the parameter typed in the
	// page, and the plant is stored: the same content replays, other content
	// conflicts.
	created := regexp.MustCompile(`"route":"/plants","path":"/plants","status":200,[^\n]*"request_id":"reference-page-create","subject":"alice"`)
	if !created.MatchString(s.logs.String()) {
		t.Errorf("no access line of the page's create in:\n%s", s.logs.String())
	}
	s.create(t, `{"id":4242,"name":"Pilea peperomioides","tag":"from the browser"}`).expect(t, 200, "")
	s.create(t, `{"id":4242,"name":"another"}`).expectError(t, 409, "40901")

	// Read it, find it in a list filtered by its tag, then delete it.
	status, body = b.tryIt(t, operation{tag: "plants", id: "getPlant"}, map[string]string{"id": "4242"}, "")
	if plant, _ := body.(map[string]any); status != 200 || plant["id"] != float64(4242) || plant["name"] != "Pilea peperomioides" {
		t.Fatalf("read from the page: %d %v", status, body)
	}
	status, body = b.tryIt(t, operation{tag: "plants", id: "listPlants"}, map[string]string{"tag": "from the browser"}, "")
	if page, _ := body.([]any); status != 200 || len(page) != 1 || page[0].(map[string]any)["id"] != float64(4242) {
		t.Fatalf("list from the page: %d %v", status, body)
	}
	if path := os.Getenv(screenshotEnv); path != "" {
		b.showAnswer(t, create)
		b.saveScreenshot(t, path)
	}
	if status, _ = b.tryIt(t, operation{tag: "plants", id: "deletePlant"}, map[string]string{"id": "4242"}, ""); status != 204 {
		t.Fatalf("delete from the page: %d", status)
	}
	s.call(t, "GET", "/plants/4242").expectError(t, 404, "40402")

	b.expectCleanRun(t)
}

// findBrowser returns the path of Chromium: PLANTSTORE_TEST_BROWSER, else the
// first of the usual names on PATH. Without one the test is skipped, except
// under CI=true, where it fails.
func findBrowser(t *testing.T) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	if p := os.Getenv(browserEnv); p != "" {
		names = []string{p}
	}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no browser: install Debian's chromium package or set " + browserEnv + " (tried " + strings.Join(names, ", ") + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser is one headless Chromium tab and what it saw: console errors,
// requests, failed loads and the statuses of the answers.
type browser struct {
	ctx  context.Context // the tab; steps run under a deadline derived from it
	base *url.URL        // the service

	mu        sync.Mutex
	problems  []string // console errors, exceptions, failed loads, other hosts
	reported  bool     // expectCleanRun has reported the problems
	requests  map[network.RequestID]string
	responses map[string]int64
}

// stepTimeout bounds each step; a step waits for elements, never sleeps.
const stepTimeout = 45 * time.Second

func startBrowser(t *testing.T, path, base string) *browser {
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
	b := &browser{ctx: ctx, base: baseURL, requests: map[network.RequestID]string{}, responses: map[string]int64{}}
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
		b.saveScreenshot(t, filepath.Join(t.ArtifactDir(), "reference-page.png"))
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
func (b *browser) observe(ev any) {
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
func (b *browser) sameOrigin(raw string) bool {
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
func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
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
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// open loads a page of the service and waits until Swagger UI shows the
// document.
func (b *browser) open(t *testing.T, path string) {
	t.Helper()
	start := time.Now()
	b.do(t, "open "+path,
		chromedp.Navigate(b.base.JoinPath(path).String()),
		chromedp.WaitVisible(chromedp.CSS(".swagger-ui .information-container .title")),
		chromedp.WaitVisible(chromedp.CSS(".swagger-ui .opblock")),
	)
	t.Logf("%s shows the document after %v", path, time.Since(start).Round(time.Millisecond))
}

// operation is an operation of the document as the page shows it.
type operation struct{ tag, id string }

// sel selects inside the operation's block.
func (o operation) sel(inner string) chromedp.CSS {
	return chromedp.CSS("#operations-" + o.tag + "-" + o.id + " " + inner)
}

// documentedOperations lists the document's operations, as the page names
// their blocks.
func documentedOperations(t *testing.T) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			ids = append(ids, "operations-"+op.Tags[0]+"-"+op.OperationID)
		}
	}
	slices.Sort(ids)
	return ids
}

func (b *browser) expectOperations(t *testing.T, want []string) {
	t.Helper()
	got := eval[[]string](t, b, `Array.from(document.querySelectorAll('.opblock[id^="operations-"]'), e => e.id)`)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the page lists operations %v, want %v", got, want)
	}
}

// authorize pastes token into the Authorize dialog's bearer field.
func (b *browser) authorize(t *testing.T, token string) {
	t.Helper()
	b.do(t, "authorize",
		chromedp.Click(chromedp.CSS(".swagger-ui .auth-wrapper .btn.authorize")),
		chromedp.WaitVisible(chromedp.ID("auth-bearer-value")),
		b.typeInto(chromedp.CSS("#auth-bearer-value"), token),
		chromedp.Click(chromedp.CSS(`.dialog-ux button[aria-label="Apply credentials"]`)),
		// The dialog shows the scheme as authorized, with a Logout button.
		chromedp.WaitVisible(chromedp.CSS(`.dialog-ux button[aria-label="Remove authorization"]`)),
		chromedp.Click(chromedp.CSS(".dialog-ux .btn-done")),
		chromedp.WaitNotPresent(chromedp.CSS(".dialog-ux")),
	)
}

// typeInto replaces the text of a field as a person pasting would, so that
// the page's own handlers see the change.
func (b *browser) typeInto(sel chromedp.CSS, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if err := chromedp.Do(ctx, chromedp.Focus(sel)); err != nil {
			return err
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement.select()`)); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})
}

// tryIt opens an operation, fills its parameters (by name) and its body
// when given, executes it, and returns the status and JSON body the page
// shows. An answer left by an earlier run is cleared first.
func (b *browser) tryIt(t *testing.T, op operation, params map[string]string, body string) (int, any) {
	t.Helper()
	block := `document.getElementById("operations-` + op.tag + `-` + op.id + `")`
	b.do(t, "find "+op.id, chromedp.WaitVisible(op.sel(".opblock-summary")))
	var steps []chromedp.Action[chromedp.Void]
	if !eval[bool](t, b, block+`.classList.contains("is-open")`) {
		steps = append(steps, chromedp.Click(op.sel(".opblock-summary-control")))
	}
	if eval[bool](t, b, block+`.querySelector(".live-responses-table") !== null`) {
		steps = append(steps, chromedp.Click(op.sel(".btn-clear")), chromedp.WaitNotPresent(op.sel(".live-responses-table")))
	}
	for name, value := range params {
		steps = append(steps, b.typeInto(op.sel(`tr[data-param-name="`+name+`"] input`), value))
	}
	if body != "" {
		steps = append(steps, b.typeInto(op.sel("textarea.body-param__text"), body))
	}
	steps = append(steps,
		chromedp.Click(op.sel(".execute-wrapper .btn.execute")),
		chromedp.WaitVisible(op.sel(".live-responses-table tbody .response-col_status")),
	)
	b.do(t, "try "+op.id, steps...)

	statusText := eval[string](t, b, block+`.querySelector(".live-responses-table tbody .response-col_status").innerText`)
	status, err := strconv.Atoi(strings.TrimSpace(statusText))
	if err != nil {
		t.Fatalf("try %s: status %q", op.id, statusText)
	}
	// The body is the block after the "Response body" heading.
	text := eval[string](t, b, `(() => {
		const h = Array.from(`+block+`.querySelectorAll(".live-responses-table h5")).find(h => h.textContent === "Response body");
		const pre = h && h.nextElementSibling && h.nextElementSibling.querySelector("pre");
		return pre ? pre.innerText : "";
	})()`)
	var answer any
	if strings.TrimSpace(text) != "" {
		if err := json.Unmarshal([]byte(text), &answer); err != nil {
			t.Fatalf("try %s: the page shows a body that is not JSON: %q", op.id, text)
		}
	}
	return status, answer
}

// showAnswer fits the viewport to the end of an operation's answer: the
// request it sent and the answer, as README's screenshot shows them.
func (b *browser) showAnswer(t *testing.T, op operation) {
	t.Helper()
	b.do(t, "show the answer of "+op.id, chromedp.EmulateViewport(1280, 1200))
	eval[chromedp.Void](t, b, `document.querySelector("#operations-`+op.tag+`-`+op.id+` .live-responses-table").scrollIntoView({block: "end"})`)
}

// saveScreenshot writes a PNG of the tab's viewport to path.
func (b *browser) saveScreenshot(t *testing.T, path string) {
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

// expectCleanRun fails t for every console error, exception, failed load or
// request to another host seen, and for any answer that was not a success.
func (b *browser) expectCleanRun(t *testing.T) {
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
