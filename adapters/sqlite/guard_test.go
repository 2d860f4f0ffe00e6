package sqlite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every column of a table the package writes is a field of the table's row
// shape, and every field a column: a column added by a migration and not to
// the row shape would be left out of every statement, and a column missing
// from a table would fail every statement, found here first.
func TestRowShapesHoldEveryColumn(t *testing.T) {
	s := newStore(t)
	for table, shape := range map[string]columns{"plants": plantColumns, "webhook_events": eventColumns, "webhook_envelopes": envelopeColumns, "plant_events": feedEventColumns} {
		var cols []string
		if err := s.read.Select(&cols, `SELECT name FROM pragma_table_info(?)`, table); err != nil {
			t.Fatal(err)
		}
		if len(cols) == 0 {
			t.Fatalf("table %s has no columns", table)
		}
		for _, c := range cols {
			if !slices.Contains(shape, c) {
				t.Errorf("column %s.%s is missing from the table's row shape %v", table, c, shape)
			}
		}
		for _, c := range shape {
			if !slices.Contains(cols, c) {
				t.Errorf("the row shape of %s names %s, which the table lacks (%v)", table, c, cols)
			}
		}
	}
}

// No statement of the package refers to a column by its position: an ORDER
// BY or GROUP BY term that is a number, or a scan into a hand-written list
// of destinations, which must match a hand-written select list. Every
// string literal of the package's code is checked, wherever it is, and so
// are the statements built from row shapes and the migrations.
func TestNoStatementRefersToAColumnByPosition(t *testing.T) {
	texts := map[string]string{} // where → SQL
	for name, text := range map[string]string{
		"insertPlant": insertPlant, "loadPlant": loadPlant, "updatePlant": updatePlant, "deletePlant": deletePlant,
		"findPlant": findPlant, "listPlants": listPlants, "listTaggedPlants": listTaggedPlants,
		"listPlantRows": listPlantRows, "listTaggedPlantsRows": listTaggedPlantsRows,
		"announcePlant": announcePlant, "claimEvents": claimEvents, "listEvents": listEvents, "outboxStats": outboxStats,
		"announceEnvelope": announceEnvelope, "claimEnvelopes": claimEnvelopes, "listEnvelopes": listEnvelopes,
		"recordEvent": recordEvent, "readFeed": readFeed, "pruneEvents": pruneEvents,
	} {
		texts[name] = text
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					if text, err := strconv.Unquote(n.Value); err == nil {
						texts[fset.Position(n.Pos()).String()] = text
					}
				}
			case *ast.CallExpr:
				if positionalScan(n) {
					t.Errorf("%s: a scan into a list of destinations; scan into a row shape by column name (sqlx)", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
	if err := fs.WalkDir(migrations, "migrations", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := fs.ReadFile(migrations, path)
		texts[path] = string(text)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for where, text := range texts {
		if terms := positionalTerms(text); len(terms) > 0 {
			t.Errorf("%s refers to columns by position (%q): %s", where, terms, text)
		}
	}
}

// positionalScan reports whether call scans into more than one destination
// given one by one: x.Scan(&a, &b).
func positionalScan(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Scan" && (len(call.Args) > 1 || call.Ellipsis.IsValid())
}

var (
	orderOrGroupBy = regexp.MustCompile(`(?i)\b(ORDER|GROUP)\s+BY\s`)
	// termEnd ends an ORDER BY or GROUP BY list, at its own depth.
	termEnd      = regexp.MustCompile(`(?i)^(LIMIT|OFFSET|HAVING|WINDOW|UNION|EXCEPT|INTERSECT|RETURNING|ORDER|FILTER)\b`)
	termModifier = regexp.MustCompile(`(?i)\s+(ASC|DESC|NULLS\s+(FIRST|LAST)|COLLATE\s+\w+)\b.*$`)
	number       = regexp.MustCompile(`^[0-9]+$`)
)

// positionalTerms returns the terms of text's ORDER BY and GROUP BY lists
// that are numbers, which SQLite reads as a column of the select list by
// position.
func positionalTerms(text string) []string {
	var found []string
	for _, at := range orderOrGroupBy.FindAllStringIndex(text, -1) {
		for _, term := range termsFrom(text[at[1]:]) {
			term = strings.TrimSpace(termModifier.ReplaceAllString(strings.TrimSpace(term), ""))
			if number.MatchString(term) {
				found = append(found, term)
			}
		}
	}
	return found
}

// termsFrom splits the comma-separated list that starts text, up to where
// it ends: a closing parenthesis or a semicolon of its own depth, or a
// keyword that follows such a list.
func termsFrom(text string) []string {
	var terms []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			continue
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')' && depth == 0, c == ';' && depth == 0:
			return append(terms, text[start:i])
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			terms = append(terms, text[start:i])
			start = i + 1
		case depth == 0 && (i == 0 || !isWordByte(text[i-1])) && termEnd.MatchString(text[i:]):
			return append(terms, text[start:i])
		}
	}
	return append(terms, text[start:])
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// The guard finds what it is for, and only that.
func TestPositionalTermsAreFound(t *testing.T) {
	for text, want := range map[string][]string{
		"SELECT name, count(*) FROM plants GROUP BY 1 ORDER BY 2":               {"1", "2"},
		"SELECT id FROM plants ORDER BY name, 2 DESC LIMIT 10":                  {"2"},
		"SELECT id FROM plants ORDER BY 1 NULLS LAST":                           {"1"},
		"SELECT tag FROM plants GROUP BY 1 HAVING count(*) > 2":                 {"1"},
		"SELECT (SELECT id FROM plants ORDER BY 1) AS x ORDER BY x":             {"1"},
		"SELECT id FROM plants ORDER BY id LIMIT ?1 + 1":                        nil,
		"SELECT group_concat(item, ',' ORDER BY id) FILTER (WHERE rn <= ?1)":    nil,
		"SELECT row_number() OVER (ORDER BY id) AS rn FROM plants WHERE id > 2": nil,
		"SELECT id FROM plants ORDER BY created_at, id LIMIT 2":                 nil,
		"SELECT id FROM t ORDER BY 'x, 2', id":                                  nil,
	} {
		if got := positionalTerms(text); !slices.Equal(got, want) {
			t.Errorf("positionalTerms(%q) = %q, want %q", text, got, want)
		}
	}
	src := `package p
func f() { row.Scan(&a, &b); row.Scan(&n); rows.StructScan(&r); row.Scan(dests...) }`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var flagged int
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && positionalScan(call) {
			flagged++
		}
		return true
	})
	if flagged != 2 {
		t.Errorf("%d positional scans found in %s, want 2", flagged, src)
	}
}
