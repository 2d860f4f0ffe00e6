package sqlite

import (
	"database/sql"
	"time"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// eventRow is a row of the webhook_events table, the outbox: a field per
// column, named by its db tag, as plantRow is for plants. Every statement on
// the outbox takes its column lists from eventColumns and scans into an
// eventRow by name. A test holds it to the table's columns.
type eventRow struct {
	ID      string `db:"id"`
	URL     string `db:"url"`
	PlantID int64  `db:"plant_id"`
	// Item is the plant as it was created, rendered by the service when the
	// event was committed with it (plantjson): the body its receiver gets.
	// NULL in an event of the previous release's binary.
	Item sql.NullString `db:"item"`
	// Name and Tag are what the previous release's binary keeps instead of
	// an item; the service writes neither (NULL), and renders an event
	// without its item from them. The release after this one drops them.
	Name sql.NullString `db:"name"`
	Tag  sql.NullString `db:"tag"`
	// The times are UTC in createdAtLayout, so that text order is time
	// order. NextAt is when the event is due; while an attempt runs, when
	// that attempt's claim ends.
	CreatedAt string         `db:"created_at"`
	RetryFrom string         `db:"retry_from"`
	Attempts  int            `db:"attempts"`
	NextAt    string         `db:"next_at"`
	Claim     sql.NullString `db:"claim"`
	LastError sql.NullString `db:"last_error"`
	FailedAt  sql.NullString `db:"failed_at"`
	// TraceParent is the W3C traceparent of the create, NULL when it was
	// not traced.
	TraceParent sql.NullString `db:"trace_parent"`
}

// eventColumns are the columns of eventRow.
var eventColumns = columnsOf[eventRow]()

// eventRowsOf are the rows of the events that announce rec, one per
// receiver of urls, each with its own id. item is rec's plant rendered.
func eventRowsOf(rec application.Record, item string, urls []string) []eventRow {
	at := stamp(rec.CreatedAt)
	var traceParent sql.NullString
	if rec.TraceParent != "" {
		traceParent = sql.NullString{String: rec.TraceParent, Valid: true}
	}
	rows := make([]eventRow, len(urls))
	for i, url := range urls {
		rows[i] = eventRow{
			ID: newEventID(), URL: url, PlantID: int64(rec.Plant.ID()), Item: sql.NullString{String: item, Valid: true},
			CreatedAt: at, RetryFrom: at, NextAt: at, TraceParent: traceParent,
		}
	}
	return rows
}

// event is the event r stores, as of its last attempt (Attempts counts the
// attempts made), its item as stored or, when it has none, rendered now.
func (r eventRow) event() (application.Event, error) {
	e := application.Event{
		ID: r.ID, URL: r.URL, PlantID: domain.ID(r.PlantID), Item: []byte(r.Item.String),
		Attempts: r.Attempts, TraceParent: r.TraceParent.String,
	}
	if !r.Item.Valid {
		p, err := plantState{ID: r.PlantID, Name: r.Name.String, Tag: r.Tag}.plant()
		if err != nil {
			return application.Event{}, err
		}
		e.Item = plantjson.AppendItem(nil, p)
	}
	e.CreatedAt, _ = time.Parse(createdAtLayout, r.CreatedAt)
	e.RetryFrom, _ = time.Parse(createdAtLayout, r.RetryFrom)
	return e, nil
}

// envelopeRow is a row of the webhook_envelopes table, the outbox of the
// event payload: a delivery of an event to one receiver, whose body is the
// event's envelope, rendered from what the row keeps. Its statements take
// their column lists from envelopeColumns, as eventRow's do.
type envelopeRow struct {
	ID  string `db:"id"`
	URL string `db:"url"`
	// Type, Number and Item are the event's, and CreatedAt its commit, as
	// plant_events keeps them.
	Type      string `db:"type"`
	Number    int64  `db:"number"`
	PlantID   int64  `db:"plant_id"`
	Item      string `db:"item"`
	CreatedAt string `db:"created_at"`
	// RetryFrom, Attempts, NextAt, Claim, LastError and FailedAt are as in
	// eventRow.
	RetryFrom   string         `db:"retry_from"`
	Attempts    int            `db:"attempts"`
	NextAt      string         `db:"next_at"`
	Claim       sql.NullString `db:"claim"`
	LastError   sql.NullString `db:"last_error"`
	FailedAt    sql.NullString `db:"failed_at"`
	TraceParent sql.NullString `db:"trace_parent"`
}

// envelopeColumns are the columns of envelopeRow.
var envelopeColumns = columnsOf[envelopeRow]()

// envelopeRowsOf are the rows that announce the event e, traced by
// traceParent ("" for none), one per receiver of urls, each with its own
// id, due at once.
func envelopeRowsOf(e feedEventRow, traceParent string, urls []string) []envelopeRow {
	trace := sql.NullString{String: traceParent, Valid: traceParent != ""}
	rows := make([]envelopeRow, len(urls))
	for i, url := range urls {
		rows[i] = envelopeRow{
			ID: newEventID(), URL: url, Type: e.Type, Number: e.Number, PlantID: e.PlantID, Item: e.Item,
			CreatedAt: e.CreatedAt, RetryFrom: e.CreatedAt, NextAt: e.CreatedAt, TraceParent: trace,
		}
	}
	return rows
}

// event is the delivery r stores, as of its last attempt.
func (r envelopeRow) event() (application.Event, error) {
	e := application.Event{
		ID: r.ID, URL: r.URL, PlantID: domain.ID(r.PlantID), Item: []byte(r.Item),
		Type: application.EventType(r.Type), Number: r.Number, Attempts: r.Attempts, TraceParent: r.TraceParent.String,
	}
	e.CreatedAt, _ = time.Parse(createdAtLayout, r.CreatedAt)
	e.RetryFrom, _ = time.Parse(createdAtLayout, r.RetryFrom)
	return e, nil
}

// status is where r stands, for the operator.
func (r envelopeRow) status() (nextAt string, lastError sql.NullString) { return r.NextAt, r.LastError }

// status is where r stands, for the operator.
func (r eventRow) status() (nextAt string, lastError sql.NullString) { return r.NextAt, r.LastError }
