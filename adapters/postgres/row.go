package postgres

import (
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// plantRow is a row of the plants table: a field per column, named by its
// db tag, with the column's type in its pg tag. It is the one place that
// knows the columns: every statement takes its column lists from it
// (rowColumns), a batch's arguments are its fields as arrays (rowArrays),
// and rows are scanned into its fields in the order of those lists
// (rowScanner), so a new column is a field here, its values in rowOf and
// plant, and a migration. A test holds it to the table's columns.
//
// Every field but the id may be NULL: a batch answers a write whose id has
// no row with NULLs.
type plantRow struct {
	ID   int64          `db:"id" pg:"bigint"`
	Name sql.NullString `db:"name" pg:"text"`
	Tag  sql.NullString `db:"tag" pg:"text"`
	// Item is the plant as the API renders a PlantItem (plantjson), which
	// the service writes with every write of the plant: what a list page
	// aggregates, and what the plant's events carry.
	Item sql.NullString `db:"item" pg:"text"`
	// Version tells this state of the row from every other the id has
	// had, across deletes and re-creates: the database sets it at every
	// write, from the sequence plant_versions, and the service never writes
	// it (versionColumn). An update by function writes only over the
	// version it read.
	Version   sql.NullInt64  `db:"version" pg:"bigint"`
	CreatedBy sql.NullString `db:"created_by" pg:"text"`
	CreatedAt sql.NullTime   `db:"created_at" pg:"timestamptz"`
}

// versionColumn is the column the database sets at every write.
const versionColumn = "version"

// rowOf is the row of the plant of rec, at version.
func rowOf(rec application.Record, version int64) plantRow {
	return rowWithItem(rec, itemOf(rec.Plant), version)
}

// rowWithItem is rowOf with the plant's item already rendered.
func rowWithItem(rec application.Record, item string, version int64) plantRow {
	f := rec.Plant.Fields()
	return plantRow{
		ID:        f.ID,
		Name:      sql.NullString{String: f.Name, Valid: true},
		Tag:       nullString(f.Tag),
		Item:      sql.NullString{String: item, Valid: true},
		Version:   sql.NullInt64{Int64: version, Valid: true},
		CreatedBy: sql.NullString{String: rec.CreatedBy, Valid: true},
		CreatedAt: sql.NullTime{Time: rec.CreatedAt, Valid: true},
	}
}

// itemBuffers recycle the buffers items are rendered into: the encoder
// then appends into room the buffer has, and the item's string is the one
// allocation.
var itemBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// itemOf is p's item, as plantjson renders it.
func itemOf(p domain.Plant) string {
	buf := itemBuffers.Get().(*[]byte)
	b := plantjson.AppendItem((*buf)[:0], p)
	item := string(b)
	*buf = b[:0]
	itemBuffers.Put(buf)
	return item
}

// with is r holding p, whose item is item, instead: the row an update
// writes over r, which carries the version it was read at. Its create's
// record is r's, NULL when r was read by id (restoredColumns): a
// replacement leaves the stored one as it is.
func (r plantRow) with(p domain.Plant, item string) plantRow {
	next := rowWithItem(application.Record{Plant: p}, item, r.Version.Int64)
	next.CreatedBy, next.CreatedAt = r.CreatedBy, r.CreatedAt
	return next
}

// present reports whether r is a stored row rather than the NULLs of none.
func (r plantRow) present() bool { return r.Name.Valid }

// plant rebuilds the stored plant, refusing a row that breaks the rules
// (one written around the service) instead of serving it.
func (r plantRow) plant() (domain.Plant, error) {
	f := domain.PlantFields{ID: r.ID, Name: r.Name.String}
	if r.Tag.Valid {
		f.Tag = &r.Tag.String
	}
	p, err := domain.RestorePlant(f)
	if err != nil {
		return domain.Plant{}, fmt.Errorf("store: stored plant %d breaks the plant rules: %w", r.ID, err)
	}
	return p, nil
}

func nullString(s *string) sql.NullString {
	if s == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *s, Valid: true}
}

// column is one column of plantRow.
type column struct {
	name, pgType string
	field        int
}

// rowColumns are plantRow's columns in its fields' order.
var rowColumns = func() []column {
	t := reflect.TypeFor[plantRow]()
	cols := make([]column, t.NumField())
	for i := range cols {
		f := t.Field(i)
		cols[i] = column{name: f.Tag.Get("db"), pgType: f.Tag.Get("pg"), field: i}
		if cols[i].name == "" || cols[i].pgType == "" {
			panic("postgres: plantRow." + f.Name + " needs db and pg tags")
		}
	}
	return cols
}()

// columnList names the row's columns, each after prefix ("plants."), but
// those in except.
func columnList(prefix string, except ...string) string {
	var names []string
	for _, c := range rowColumns {
		if !contains(except, c.name) {
			names = append(names, prefix+c.name)
		}
	}
	return strings.Join(names, ", ")
}

// restoredColumns are the row's columns a read of a plant selects: every
// column but those in unrestored, which it selects as typed NULLs, so that
// the row still scans into plantRow.
func restoredColumns() string {
	cols := make([]string, len(rowColumns))
	for i, c := range rowColumns {
		cols[i] = c.name
		if contains(unrestored, c.name) {
			cols[i] = "NULL::" + c.pgType + " AS " + c.name
		}
	}
	return strings.Join(cols, ", ")
}

// unrestored are the columns neither a read of a plant nor an update of
// one needs: the plant's item, which the service renders again from its
// fields, and its create's record, which no later write changes.
var unrestored = []string{"item", "created_by", "created_at"}

// nullColumns are the row's columns as typed NULLs, but those in except:
// the row of an answer that has none.
func nullColumns(except ...string) string {
	var nulls []string
	for _, c := range rowColumns {
		if !contains(except, c.name) {
			nulls = append(nulls, "NULL::"+c.pgType+" AS "+c.name)
		}
	}
	return strings.Join(nulls, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// rowScanner returns the function that scans the current row of rows into
// r and then extra: rows are of a statement that selects the row's columns
// as columnList names them, in rowColumns' order, and then one column per
// target in extra. It scans by position, into pointers to r's fields found
// once per statement, where sqlx's StructScan looks every column up by
// name and finds the fields again for each row; before the first row it
// holds the statement's column names to that order, so that a statement
// that selects them otherwise fails instead of filling the wrong fields.
func rowScanner(rows *sqlx.Rows, r *plantRow, extra ...any) func() error {
	var dest []any
	return func() error {
		if dest == nil {
			if err := checkColumns(rows, len(extra)); err != nil {
				return err
			}
			v := reflect.ValueOf(r).Elem()
			for _, c := range rowColumns {
				dest = append(dest, v.Field(c.field).Addr().Interface())
			}
			dest = append(dest, extra...)
		}
		return rows.Scan(dest...)
	}
}

// checkColumns reports an error unless the columns of rows start with the
// row's, in rowColumns' order, and then have extra more.
func checkColumns(rows *sqlx.Rows, extra int) error {
	names, err := rows.Columns()
	if err != nil {
		return err
	}
	ok := len(names) == len(rowColumns)+extra
	for i, c := range rowColumns {
		ok = ok && names[i] == c.name
	}
	if !ok {
		return fmt.Errorf("store: statement selects %v, not the row's columns in order and %d more", names, extra)
	}
	return nil
}

// rowArrays are rows as one array literal per column, in rowColumns' order:
// the arguments of unnestRows.
func rowArrays(rows []plantRow) []any {
	args := make([]any, len(rowColumns))
	var b []byte
	for _, c := range rowColumns {
		b = appendArray(b[:0], rows, c.field)
		args[c.field] = string(b)
	}
	return args
}

// appendArray appends the array literal of field of rows. Each value is
// written from the field itself, reached through a typed pointer: nothing
// is boxed, formatted into a string of its own or gathered first.
func appendArray(b []byte, rows []plantRow, field int) []byte {
	b = append(b, '{')
	for k := range rows {
		if k > 0 {
			b = append(b, ',')
		}
		switch v := reflect.ValueOf(&rows[k]).Elem().Field(field).Addr().Interface().(type) {
		case *int64:
			b = strconv.AppendInt(b, *v, 10)
		case *sql.NullString:
			if !v.Valid {
				b = append(b, "NULL"...)
			} else {
				b = appendQuoted(b, v.String)
			}
		case *sql.NullInt64:
			if !v.Valid {
				b = append(b, "NULL"...)
			} else {
				b = strconv.AppendInt(b, v.Int64, 10)
			}
		case *sql.NullTime:
			if !v.Valid {
				b = append(b, "NULL"...)
			} else {
				b = append(b, '"')
				b = append(v.Time.UTC().AppendFormat(b, time.RFC3339Nano), '"')
			}
		default:
			panic(fmt.Sprintf("postgres: no array literal for %T", v))
		}
	}
	return append(b, '}')
}
