package httpapi

import (
	"testing"

	"github.com/plantstore/plantstore/adapters/httpapi/referencetest"
)

// The tables of the document's text, such as the error table of the API's
// description, show each cell apart from the next in headless Chromium:
// Swagger UI pads its tables' cells vertically only, which ran the header's
// "status" into "when" and each status into its description.
func TestReferencePageTablesKeepTheirCellsApart(t *testing.T) {
	browser := referencetest.Find(t)
	s := startServer(t)
	b := referencetest.Start(t, browser, s.url)
	b.Open(t, "/docs")
	gaps := b.TableCellGaps(t)
	if len(gaps) < 2*15 { // the error table: a header and 14 rows, 3 cells each
		t.Fatalf("the page shows %d pairs of table cells; want the error table's at least", len(gaps))
	}
	header := false
	for _, g := range gaps {
		header = header || g.Left == "status" && g.Right == "when"
		if g.Pixels < 8 {
			t.Errorf("%q and %q are %.1f px apart; want at least 8", g.Left, g.Right, g.Pixels)
		}
	}
	if !header {
		t.Error(`the page shows no header cells "status" and "when" side by side`)
	}
	b.ExpectCleanRun(t)
}
