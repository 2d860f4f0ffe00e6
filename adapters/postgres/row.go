package postgres

import (
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// plantRow is a row of the plants table: a field per column, named by its
// db tag, with the column's type in its pg tag. It is the one place that
// knows the columns: every statement takes its column lists from it
// (rowColumns), a batch's arguments are its fields as arrays (rowArrays),
// and rows are scanned into it by column name (sqlx), so a new column is a
// field here, its values in rowOf and plant, and a migration. A test holds
// it to the table's columns.
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
	// Version counts the plant's writes by the service, from 1 at its
	// create: an update by function writes only over the version it read.
	Version   sql.NullInt64  `db:"version" pg:"bigint"`
	CreatedBy sql.NullString `db:"created_by" pg:"text"`
	CreatedAt sql.NullTime   `db:"created_at" pg:"timestamptz"`
}

// rowOf is the row of the plant of rec, at version.
func rowOf(rec application.Record, version int64) plantRow {
	f := rec.Plant.Fields()
	return plantRow{
		ID:        f.ID,
		Name:      sql.NullString{String: f.Name, Valid: true},
		Tag:       nullString(f.Tag),
		Item:      sql.NullString{String: string(plantjson.AppendItem(nil, rec.Plant)), Valid: true},
		Version:   sql.NullInt64{Int64: version, Valid: true},
		CreatedBy: sql.NullString{String: rec.CreatedBy, Valid: true},
		CreatedAt: sql.NullTime{Time: rec.CreatedAt, Valid: true},
	}
}

// with is r holding p instead, one version on: the row an update writes.
func (r plantRow) with(p domain.Plant) plantRow {
	next := rowOf(application.Record{Plant: p, CreatedBy: r.CreatedBy.String, CreatedAt: r.CreatedAt.Time}, r.Version.Int64+1)
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

// rowArrays are rows as one array literal per column, in rowColumns' order:
// the arguments of unnestRows.
func rowArrays(rows []plantRow) []any {
	args := make([]any, len(rowColumns))
	for _, c := range rowColumns {
		values := make([]reflect.Value, len(rows))
		for k := range rows {
			values[k] = reflect.ValueOf(&rows[k]).Elem().Field(c.field)
		}
		args[c.field] = arrayOf(values)
	}
	return args
}

// arrayOf is the array literal of values, which share one of plantRow's
// field types. The sql.Null types are read by field (the value, then
// Valid), without boxing each value.
func arrayOf(values []reflect.Value) string {
	if len(values) == 0 {
		return "{}"
	}
	t := values[0].Type()
	if t == reflect.TypeFor[int64]() {
		ints := make([]int64, len(values))
		for k, v := range values {
			ints[k] = v.Int()
		}
		return bigintArray(ints)
	}
	texts, valid := make([]string, len(values)), make([]bool, len(values))
	for k, v := range values {
		valid[k] = v.Field(1).Bool()
		switch t {
		case reflect.TypeFor[sql.NullString]():
			texts[k] = v.Field(0).String()
		case reflect.TypeFor[sql.NullInt64]():
			texts[k] = strconv.FormatInt(v.Field(0).Int(), 10)
		case reflect.TypeFor[sql.NullTime]():
			texts[k] = v.Field(0).Interface().(time.Time).UTC().Format(time.RFC3339Nano)
		default:
			panic(fmt.Sprintf("postgres: no array literal for %s", t))
		}
	}
	return textArray(texts, valid)
}
