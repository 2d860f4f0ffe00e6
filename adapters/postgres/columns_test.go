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

// No statement of the store, in its Go code or its migrations, refers to a
// column by its position (ORDER BY 6, GROUP BY 1): a column inserted
// before it would silently change what the statement means.
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
	for _, bad := range []string{"SELECT a, b FROM t ORDER BY 2", "SELECT a FROM t GROUP BY 1, a", "ORDER BY created_at, 1 DESC LIMIT 3"} {
		if positionalReference(bad) == "" {
			t.Errorf("positionalReference misses %q", bad)
		}
	}
	for _, good := range []string{"ORDER BY id LIMIT $2", "ORDER BY next_at\n    LIMIT %d", "ORDER BY p.id, e.n", "array_agg(x ORDER BY 1 + n)"} {
		if ref := positionalReference(good); ref != "" {
			t.Errorf("positionalReference flags %q in %q", ref, good)
		}
	}
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
			if err == nil && regexp.MustCompile(`(?i)\b(select|insert|update|delete)\b`).MatchString(s) {
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
