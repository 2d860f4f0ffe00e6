package sqlite

import (
	"reflect"
	"slices"
	"strings"
)

// columns are the columns of a row shape, in its fields' order: the column
// lists of the statements that read and write it. They are taken from the
// fields' db tags, the names sqlx binds named parameters and scans result
// columns by, so that a statement, its arguments and its scans cannot
// disagree on a column.
type columns []string

// columnsOf lists the db tags of Row, a struct whose every field names its
// column, or embeds a struct of such fields (whose columns it lists in its
// place, as sqlx maps them). A field without a tag is a mistake in the row
// shape, found when the package loads.
func columnsOf[Row any]() columns { return appendColumns(nil, reflect.TypeFor[Row]()) }

func appendColumns(cs columns, t reflect.Type) columns {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			cs = appendColumns(cs, f.Type)
			continue
		}
		c := f.Tag.Get("db")
		if c == "" || c == "-" {
			panic("sqlite: " + t.Name() + "." + f.Name + " needs a db tag naming its column")
		}
		cs = append(cs, c)
	}
	return cs
}

// list is the columns as a select or insert list: "id, name".
func (cs columns) list() string { return strings.Join(cs, ", ") }

// params is the columns as named parameters: ":id, :name".
func (cs columns) params() string { return ":" + strings.Join(cs, ", :") }

// assignments sets every column but those in except from its named
// parameter: "name = :name, tag = :tag".
func (cs columns) assignments(except ...string) string {
	var set []string
	for _, c := range cs {
		if !slices.Contains(except, c) {
			set = append(set, c+" = :"+c)
		}
	}
	return strings.Join(set, ", ")
}
