package referencetest

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/plantstore/plantstore/docs"
)

// Open loads a page of the service and waits until Swagger UI shows the
// document.
func (b *Browser) Open(t testing.TB, path string) {
	t.Helper()
	start := time.Now()
	b.do(t, "open "+path,
		chromedp.Navigate(b.base.JoinPath(path).String()),
		chromedp.WaitVisible(chromedp.CSS(".swagger-ui .information-container .title")),
		chromedp.WaitVisible(chromedp.CSS(".swagger-ui .opblock")),
	)
	t.Logf("%s shows the document after %v", path, time.Since(start).Round(time.Millisecond))
}

// Operation is an operation of the document as the page shows it.
type Operation struct{ Tag, ID string }

// sel selects inside the operation's block.
func (o Operation) sel(inner string) chromedp.CSS {
	return chromedp.CSS("#operations-" + o.Tag + "-" + o.ID + " " + inner)
}

// DocumentedOperations lists the document's operations and its webhooks,
// as the page names their blocks.
func DocumentedOperations(t testing.TB) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, item := range append(slices.Collect(maps.Values(doc.Paths.Map())), slices.Collect(maps.Values(doc.Webhooks))...) {
		for _, op := range item.Operations() {
			ids = append(ids, "operations-"+op.Tags[0]+"-"+op.OperationID)
		}
	}
	slices.Sort(ids)
	return ids
}

func (b *Browser) ExpectOperations(t testing.TB, want []string) {
	t.Helper()
	got := eval[[]string](t, b, `Array.from(document.querySelectorAll('.opblock[id^="operations-"]'), e => e.id)`)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the page lists operations %v, want %v", got, want)
	}
}

// Authorize pastes token into the Authorize dialog's bearer field.
func (b *Browser) Authorize(t testing.TB, token string) {
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
func (b *Browser) typeInto(sel chromedp.CSS, text string) chromedp.Action[chromedp.Void] {
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

// Answer is what the page shows of an answer: its status, its body decoded
// from JSON (nil when it has none) and its headers, by lower-case name.
type Answer struct {
	Status int
	Body   any
	Header map[string]string
}

// TryIt opens an operation, checks the parameters it shows
// (ExpectParameters), fills them (by name) and its body when given,
// executes it, and returns the answer the page shows. An answer
// left by an earlier run is cleared first.
func (b *Browser) TryIt(t testing.TB, op Operation, params map[string]string, body string) Answer {
	t.Helper()
	block := `document.getElementById("operations-` + op.Tag + `-` + op.ID + `")`
	b.do(t, "find "+op.ID, chromedp.WaitVisible(op.sel(".opblock-summary")))
	if !eval[bool](t, b, block+`.classList.contains("is-open")`) {
		b.do(t, "open "+op.ID, chromedp.Click(op.sel(".opblock-summary-control")))
	}
	b.ExpectParameters(t, op)
	var steps []chromedp.Action[chromedp.Void]
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
	b.do(t, "try "+op.ID, steps...)

	statusText := eval[string](t, b, block+`.querySelector(".live-responses-table tbody .response-col_status").innerText`)
	status, err := strconv.Atoi(strings.TrimSpace(statusText))
	if err != nil {
		t.Fatalf("try %s: status %q", op.ID, statusText)
	}
	// The body and the headers are each in the block after their heading.
	section := func(heading string) string {
		return eval[string](t, b, `(() => {
		const h = Array.from(`+block+`.querySelectorAll(".live-responses-table h5")).find(h => h.textContent === "`+heading+`");
		const next = h && h.nextElementSibling;
		const pre = next && (next.matches("pre") ? next : next.querySelector("pre"));
		return pre ? pre.innerText : "";
	})()`)
	}
	a := Answer{Status: status, Header: map[string]string{}}
	if text := section("Response body"); strings.TrimSpace(text) != "" {
		if err := json.Unmarshal([]byte(text), &a.Body); err != nil {
			t.Fatalf("try %s: the page shows a body that is not JSON: %q", op.ID, text)
		}
	}
	for line := range strings.SplitSeq(section("Response headers"), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok {
			a.Header[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(value)
		}
	}
	return a
}

// ShowAnswer fits the viewport to the end of an operation's answer: the
// request it sent and the answer, as README's screenshot shows them.
func (b *Browser) ShowAnswer(t testing.TB, op Operation) {
	t.Helper()
	b.do(t, "show the answer of "+op.ID, chromedp.EmulateViewport(1280, 1200))
	eval[chromedp.Void](t, b, `document.querySelector("#operations-`+op.Tag+`-`+op.ID+` .live-responses-table").scrollIntoView({block: "end"})`)
}

// CellGap is the room between the text of two neighbouring cells of a row
// of a table the page shows, in CSS pixels: negative when they overlap.
type CellGap struct {
	Left, Right string
	Pixels      float64
}

// TableCellGaps measures, in every table of the document's own text (the
// Markdown of its descriptions), the room between the text of each cell and
// that of the next cell of its row, header rows included.
func (b *Browser) TableCellGaps(t testing.TB) []CellGap {
	t.Helper()
	return eval[[]CellGap](t, b, `(() => {
		// The extent of a cell's text, however it wraps.
		const extent = cell => {
			const r = document.createRange();
			r.selectNodeContents(cell);
			const rects = Array.from(r.getClientRects()).filter(x => x.width > 0);
			return rects.length === 0 ? null : {left: Math.min(...rects.map(x => x.left)), right: Math.max(...rects.map(x => x.right))};
		};
		const gaps = [];
		for (const row of document.querySelectorAll(".swagger-ui .markdown table tr, .swagger-ui .renderedMarkdown table tr")) {
			const cells = Array.from(row.children);
			for (let i = 0; i + 1 < cells.length; i++) {
				const a = extent(cells[i]), b = extent(cells[i + 1]);
				if (a && b) {
					gaps.push({Left: cells[i].innerText, Right: cells[i + 1].innerText, Pixels: b.left - a.right});
				}
			}
		}
		return gaps;
	})()`)
}

// AnswerText is the text of what ShowAnswer shows of an operation: its
// request body, the request the page sent and the answer, with what
// changes from run to run (the port, the token, the date, the duration)
// replaced by a fixed word. A picture of the answer goes with the text it
// was taken with, so that a test can tell when the page no longer looks so.
func (b *Browser) AnswerText(t testing.TB, op Operation) string {
	t.Helper()
	text := eval[string](t, b, `(() => {
		const block = document.getElementById("operations-`+op.Tag+`-`+op.ID+`");
		const parts = [];
		for (const e of block.querySelectorAll(".opblock-section-request-body, .responses-inner .request-url, .responses-inner .curl-command, .live-responses-table")) {
			parts.push(e.innerText);
		}
		const body = block.querySelector("textarea.body-param__text");
		if (body) {
			parts.push(body.value);
		}
		return parts.join("\n");
	})()`)
	for _, r := range answerNoise {
		text = r.re.ReplaceAllString(text, r.with)
	}
	var lines []string
	for line := range strings.SplitSeq(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// answerNoise is what differs between two runs of the same answer.
var answerNoise = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`), "$1:PORT"},
	{regexp.MustCompile(`Bearer [A-Za-z0-9._~+/=-]+`), "Bearer TOKEN"},
	{regexp.MustCompile(`(?im)^(\s*date:).*$`), "$1 DATE"},
	{regexp.MustCompile(`\b\d+ ms\b`), "N ms"},
}
