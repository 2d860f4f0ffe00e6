package sqlite

import (
	"database/sql"
	"fmt"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// plantRow is a row of the plants table: a field per column, named by its
// db tag. It is the one place that knows the columns: every statement on
// plants takes its column lists from plantColumns or stateColumns, binds
// its arguments from a row by name and scans into one by name (sqlx), so a
// new column is a field here, its value in stateOf and plant (or rowOf),
// and a migration. A test holds it to the table's columns.
type plantRow struct {
	plantState
	// What the create recorded, once: who created the plant and when (UTC
	// in createdAtLayout, so that text order is time order).
	CreatedBy string `db:"created_by"`
	CreatedAt string `db:"created_at"`
}

// plantState is the part of a plant's row that holds the plant as it is
// now: what every write of the plant sets, all of it, and what a read of
// the plant needs.
type plantState struct {
	ID   int64          `db:"id"`
	Name string         `db:"name"`
	Tag  sql.NullString `db:"tag"`
	// Item is the plant as the API renders a PlantItem (plantjson), written
	// with every write of the plant by the service: what a list page
	// aggregates. NULL in a row stored before the column existed, or
	// written around the service; such a row is rendered when read.
	Item sql.NullString `db:"item"`
}

var (
	// plantColumns are the columns of plantRow, every column of plants.
	plantColumns = columnsOf[plantRow]()
	// stateColumns are the columns of plantState.
	stateColumns = columnsOf[plantState]()
)

// rowOf is the row that stores rec.
func rowOf(rec application.Record) plantRow {
	return plantRow{plantState: stateOf(rec.Plant), CreatedBy: rec.CreatedBy, CreatedAt: stamp(rec.CreatedAt)}
}

// stateOf is the state that stores p, its item rendered: the one place a
// plant becomes the columns that hold it.
func stateOf(p domain.Plant) plantState {
	f := p.Fields()
	s := plantState{ID: f.ID, Name: f.Name, Item: sql.NullString{String: string(plantjson.AppendItem(nil, p)), Valid: true}}
	if f.Tag != nil {
		s.Tag = sql.NullString{String: *f.Tag, Valid: true}
	}
	return s
}

// plant rebuilds the stored plant, refusing a row that breaks the plant
// rules (one written around the service) instead of serving it.
func (s plantState) plant() (domain.Plant, error) {
	f := domain.PlantFields{ID: s.ID, Name: s.Name}
	if s.Tag.Valid {
		f.Tag = &s.Tag.String
	}
	p, err := domain.RestorePlant(f)
	if err != nil {
		return domain.Plant{}, &rowError{msg: fmt.Sprintf("sqlite: stored plant %d breaks the plant rules: %v", s.ID, err)}
	}
	return p, nil
}

// appendItem appends the plant's item to dst: the one stored, or, for a
// row without one, the plant rendered now.
func (s plantState) appendItem(dst []byte) ([]byte, error) {
	if s.Item.Valid {
		return append(dst, s.Item.String...), nil
	}
	p, err := s.plant()
	if err != nil {
		return dst, err
	}
	return plantjson.AppendItem(dst, p), nil
}
