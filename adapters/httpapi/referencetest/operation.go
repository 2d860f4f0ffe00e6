package referencetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/plantstore/plantstore/docs"
)

// OpenOperation loads the page at the operation's own link,
// /docs#/<tag>/<operationId>, as following a link to it or reloading the
// page after opening it does, and waits until the page shows it open with
// the parameters the document gives it (ExpectParameters). An operation
// opened so is resolved as the page loads, which is where Swagger UI left a
// parameter declared on the path item unresolved: a row with no name,
// typed any, and requests sent to the path template as it is
// (/plants/%7Bid%7D).
func (b *Browser) OpenOperation(t testing.TB, op Operation) {
	t.Helper()
	u := *b.base
	u.Path, u.Fragment = "/docs", "/"+op.Tag+"/"+op.ID
	start := time.Now()
	b.do(t, "open "+u.String(),
		chromedp.Navigate(u.String()),
		chromedp.WaitVisible(chromedp.CSS(".swagger-ui .information-container .title")),
		chromedp.WaitVisible(op.sel(".opblock-body .execute-wrapper .btn.execute")),
	)
	t.Logf("%s shows %s open after %v", u.Path, op.ID, time.Since(start).Round(time.Millisecond))
	b.ExpectParameters(t, op)
}

// ExpectParameters waits until the open operation shows every parameter
// the document gives it (its own and its path item's), each in a row of
// its own name and place, and no other row; it fails t with the rows shown
// when they do not come to that within the step deadline.
func (b *Browser) ExpectParameters(t testing.TB, op Operation) {
	t.Helper()
	want := documentedParameters(t, op.ID)
	rows := `Array.from(document.querySelectorAll("#operations-` + op.Tag + `-` + op.ID + ` table.parameters > tbody > tr"),
		r => (r.getAttribute("data-param-name") || "(no name)") + " (" + (r.getAttribute("data-param-in") || "nowhere") + ")")`
	check := `((want) => { const got = ` + rows + `; return got.length === want.length && want.every(w => got.includes(w)); })(` + jsStrings(want) + `)`
	if err := b.poll(check); err != nil {
		shown := eval[[]string](t, b, rows)
		slices.Sort(shown)
		t.Fatalf("%s shows the parameters %q; want the document's %q (%v)", op.ID, shown, want, err)
	}
}

// poll waits, within the step deadline, until the JavaScript expression
// cond is true.
func (b *Browser) poll(cond string) error {
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(0), chromedp.WithPollingInterval(20*time.Millisecond)))
	return err
}

// documentedParameters are the parameters of the operation id as the page
// should show them, "name (in)", sorted: the operation's own and those of
// its path item, one per name and place.
func documentedParameters(t testing.TB, id string) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID != id {
				continue
			}
			var params []string
			for _, p := range append(item.Parameters, op.Parameters...) {
				if param := p.Value.Name + " (" + p.Value.In + ")"; !slices.Contains(params, param) {
					params = append(params, param)
				}
			}
			slices.Sort(params)
			return params
		}
	}
	t.Fatalf("the document has no operation %s", id)
	return nil
}

// Executable lists the operations of the document that the page can send,
// tag and operation id: every operation of a path, which excludes the
// webhooks, which the service sends rather than serves.
func Executable(t testing.TB) []Operation {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	var ops []Operation
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			ops = append(ops, Operation{Tag: op.Tags[0], ID: op.OperationID})
		}
	}
	slices.SortFunc(ops, func(a, b Operation) int { return strings.Compare(a.Tag+"/"+a.ID, b.Tag+"/"+b.ID) })
	return ops
}

// jsStrings is a JavaScript array literal of ss.
func jsStrings(ss []string) string {
	quoted := make([]string, len(ss))
	for i, s := range ss {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(quoted, ",") + "]"
}
