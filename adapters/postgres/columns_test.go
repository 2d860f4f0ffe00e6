package postgres

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/adapters/postgres/pgtest"
)

// Every column of plants is a field of plantRow, the one place the store
// learns its columns from, and the other way round: a column added by a
// migration but not to the row would be left out of every write and read.
func TestThePlantRowHasEveryColumnOfPlants(t *testing.T) {
	s, _ := newStore(t)
	var table []string
	err := s.db.SelectContext(context.Background(), &table,
		`SELECT column_name FROM information_schema.columns WHERE table_name = 'plants' AND table_schema = current_schema() ORDER BY ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	var row []string
	for _, c := range rowColumns {
		row = append(row, c.name)
	}
	slices.Sort(table)
	slices.Sort(row)
	if !slices.Equal(table, row) {
		t.Fatalf("plants has the columns %v; plantRow has %v", table, row)
	}
}

// No statement of the store refers to a column by its position (ORDER BY
// 6, GROUP BY 1): a column inserted before it would silently change what
// the statement means. The statements as they are sent to PostgreSQL are
// checked by TestContract, which runs the store suite through a
// statementRecorder (sentStatementsNameNoColumnByPosition); this test
// checks the literals of the Go code and the migrations, which hold the
// statements of paths the suite does not take (a list of plants stored
// without their items, listOneByOne), and the checks themselves. A literal
// is checked when it holds a statement or an ORDER BY or GROUP BY of one,
// so that the piece of a statement joined from pieces is checked too.
func TestNoStatementNamesAColumnByPosition(t *testing.T) {
	texts := sqlTexts(t)
	if len(texts) < 20 {
		t.Fatalf("found %d SQL texts; the scan misses the package's statements", len(texts))
	}
	for _, text := range texts {
		if ref := positionalReference(text.sql); ref != "" {
			t.Errorf("%s: %q refers to a column by position", text.where, ref)
		}
	}
	for _, bad := range []string{"SELECT a, b FROM t ORDER BY 2", "SELECT a FROM t GROUP BY 1, a", "ORDER BY created_at, 1 DESC LIMIT 3", " FROM plants ORDER BY 1 LIMIT $2"} {
		if !holdsSQL.MatchString(bad) || positionalReference(bad) == "" {
			t.Errorf("the scan of literals misses %q", bad)
		}
	}
	for _, good := range []string{"ORDER BY id LIMIT $2", "ORDER BY next_at\n    LIMIT %d", "ORDER BY p.id, e.n", "array_agg(x ORDER BY 1 + n)"} {
		if ref := positionalReference(good); ref != "" {
			t.Errorf("positionalReference flags %q in %q", ref, good)
		}
	}
}

// A statement joined at run time is checked whole where it is sent: the
// check of the recorded statements flags the positional ORDER BY of one
// joined from a column list, and only it, among every statement a store
// sent from its opening, migrations included, to this one.
func TestTheSentStatementsShowAPositionalReferenceOfAJoinedStatement(t *testing.T) {
	rec := recordStatements(t, pgtest.AdminURL())
	s, _ := newStore(t, rec.route(t))
	joined := "SELECT " + columnList("") + " FROM plants ORDER BY 1 LIMIT $1"
	rows, err := s.db.QueryxContext(context.Background(), joined, 1)
	if err != nil {
		t.Fatal(err)
	}
	_ = rows.Close()
	texts, unread := rec.statements()
	if len(unread) > 0 {
		t.Fatal(unread)
	}
	if !slices.Contains(texts, joined) {
		t.Fatalf("the recorder saw %d statements, not %q", len(texts), joined)
	}
	var flagged []string
	for _, text := range texts {
		if positionalReference(text) != "" {
			flagged = append(flagged, text)
		}
	}
	if !slices.Equal(flagged, []string{joined}) {
		t.Errorf("flagged %q; want the joined statement alone", flagged)
	}
}

// sentStatementsNameNoColumnByPosition fails t for every statement rec saw
// that refers to a column by position. Run after the store suite, it holds
// every statement the suite made the store send, however it was built.
func sentStatementsNameNoColumnByPosition(t *testing.T, rec *statementRecorder) {
	texts, unread := rec.statements()
	for _, why := range unread {
		t.Error(why)
	}
	rec.mu.Lock()
	routed := rec.routed
	rec.mu.Unlock()
	if routed == 0 {
		t.Skip("no case of the suite ran (-run)")
	}
	// A store that runs its migrations and one create sends more; fewer
	// means the recorder does not see what is sent.
	if len(texts) < 20 {
		t.Fatalf("recorded %d statements from %d stores; the recorder misses what the store sends", len(texts), routed)
	}
	for _, text := range texts {
		if ref := positionalReference(text); ref != "" {
			t.Errorf("%q refers to a column by position, in the statement sent:\n%s", ref, text)
		}
	}
	t.Logf("checked %d statements sent by %d stores", len(texts), routed)
}

// byClause is an ORDER BY or GROUP BY clause up to the keyword or
// punctuation that ends it.
var byClause = regexp.MustCompile(`(?is)\b(?:order|group)\s+by\s+(.*?)(?:\blimit\b|\boffset\b|\bfor\b|\bhaving\b|\bwindow\b|\bunion\b|\)|;|$)`)

// positionalReference returns the first ORDER BY or GROUP BY item of text
// that is a bare number, or "".
func positionalReference(text string) string {
	for _, m := range byClause.FindAllStringSubmatch(text, -1) {
		for item := range strings.SplitSeq(m[1], ",") {
			fields := strings.Fields(item)
			if len(fields) == 0 {
				continue
			}
			if _, err := strconv.Atoi(fields[0]); err == nil && (len(fields) == 1 || isOrdering(fields[1])) {
				return strings.TrimSpace(m[0])
			}
		}
	}
	return ""
}

func isOrdering(word string) bool {
	switch strings.ToUpper(word) {
	case "ASC", "DESC", "NULLS":
		return true
	}
	return false
}

type sqlText struct{ where, sql string }

// holdsSQL picks the literals that hold a statement, or the ORDER BY or
// GROUP BY of one.
var holdsSQL = regexp.MustCompile(`(?i)\b(select|insert|update|delete)\b|\b(order|group)\s+by\b`)

// sqlTexts are the string literals of the package's Go files that hold
// SQL, and its migrations.
func sqlTexts(t *testing.T) []sqlText {
	t.Helper()
	var texts []sqlText
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && holdsSQL.MatchString(s) {
				texts = append(texts, sqlText{where: fset.Position(lit.Pos()).String(), sql: s})
			}
			return true
		})
	}
	migrations, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range migrations {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, sqlText{where: name, sql: string(b)})
	}
	return texts
}
