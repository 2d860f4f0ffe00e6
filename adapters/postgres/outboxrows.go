package postgres

import (
	"database/sql"
	"sync"
	"time"

	"github.com/plantstore/plantstore/application"
	"github.com/plantstore/plantstore/domain"
)

// eventRow is an event as the outbox's statements answer it, scanned by
// column name: an unpacked table's columns, or a packed event's. Type and
// Number are the event payload's, absent (or NULL) for the plant payload's.
type eventRow struct {
	ID          string         `db:"id"`
	URL         string         `db:"url"`
	PlantID     int64          `db:"plant_id"`
	Item        string         `db:"item"`
	CreatedAt   time.Time      `db:"created_at"`
	RetryFrom   time.Time      `db:"retry_from"`
	Attempts    int            `db:"attempts"`
	TraceParent sql.NullString `db:"trace_parent"`
	Type        sql.NullString `db:"type"`
	Number      sql.NullInt64  `db:"number"`
}

func (r eventRow) event() application.Event {
	return application.Event{
		ID: r.ID, URL: r.URL, PlantID: domain.ID(r.PlantID), Item: []byte(r.Item),
		Type: application.EventType(r.Type.String), Number: r.Number.Int64,
		CreatedAt: r.CreatedAt, RetryFrom: r.RetryFrom, Attempts: r.Attempts, TraceParent: r.TraceParent.String,
	}
}

// others paces the looks at the other payload's pair of tables: a claim
// that came short looks there at most once a second per receiver, since
// deliveries there are rare (written before the setting changed, or by
// replicas that write the other payload), unless its last look found some.
// It is safe for concurrent use.
type others struct {
	mu   sync.Mutex
	next map[string]time.Time // by receiver: when to look again
}

// othersEvery is how often a receiver's claims look at the other pair of
// tables while it holds nothing.
const othersEvery = time.Second

// due reports whether url's claim at now looks at the other pair.
func (o *others) due(url string, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !now.Before(o.next[url])
}

// looked records a look at now, which found deliveries or not.
func (o *others) looked(url string, now time.Time, found bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.next == nil {
		o.next = map[string]time.Time{}
	}
	if found {
		o.next[url] = time.Time{}
	} else {
		o.next[url] = now.Add(othersEvery)
	}
}
