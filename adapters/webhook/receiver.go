package webhook

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/plantstore/plantstore/adapters/internal/plantjson"
	"github.com/plantstore/plantstore/domain"
)

// maxReceivedBody bounds what a receiver reads: a plant's body or an
// event's envelope is far smaller, and a message must be read whole to be
// verified.
const maxReceivedBody = 64 << 10

// Delivery is a verified delivery, as a receiver gets it: a new plant (the
// plant payload) or an event in its envelope (the event payload).
type Delivery struct {
	// ID is webhook-id: the same on every attempt, so a receiver can drop
	// a repeated delivery.
	ID string
	// Sent is webhook-timestamp, when this attempt was made.
	Sent time.Time
	// Type is the event's type when the body was an envelope, empty when it
	// was a new plant.
	Type string
	// EventID, Number and Committed are the enveloped event's id, number
	// and commit time, zero for a new plant.
	EventID   string
	Number    int64
	Committed time.Time
	// Plant is the new plant, or the enveloped event's plant, checked
	// against the plant rules.
	Plant domain.Plant
}

// PlantItem is the delivered plant as the service renders it (PlantItem:
// its id, then every other member it has), for a receiver that shows or
// passes on the whole plant without naming its fields.
func (d Delivery) PlantItem() []byte { return plantjson.AppendItem(nil, d.Plant) }

// plantJSON is a plant as JSON carries it: its id, which must be there
// (every integer is an id, 0 included), and its other members as the
// service renders them (plantjson.Plant), so that a field added to the
// plant reaches receivers without an edit here. Members this version does
// not know are ignored, so that a receiver keeps working when events grow.
type plantJSON struct {
	ID              *int64 `json:"id"`
	plantjson.Plant `json:",inline"`
}

// bodyJSON is either body: a plant's members, or an envelope's, which has
// data.
type bodyJSON struct {
	plantJSON
	Type      *string    `json:"type"`
	Timestamp *time.Time `json:"timestamp"`
	Data      *eventJSON `json:"data"`
}

// eventJSON is an envelope's data: the event as the feed lists it.
type eventJSON struct {
	ID     *string    `json:"id"`
	Type   *string    `json:"type"`
	Number *int64     `json:"number"`
	Time   *time.Time `json:"time"`
	Plant  *plantJSON `json:"plant"`
}

// NewReceiver returns a handler for deliveries signed with secret: it
// answers 204 and calls deliver for a verified plant or envelope, 401 when
// the signature does not verify or the timestamp is stale, 400 when the
// body is neither, 405 to anything but POST and 413 to a body over 64 KiB.
// deliver runs before the answer, one call per request; requests may come
// concurrently. Repeated deliveries are not filtered: compare Delivery.ID.
func NewReceiver(secret Secret, deliver func(Delivery)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "only POST", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxReceivedBody))
		if err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "could not read the body", http.StatusBadRequest)
			return
		}
		sent, err := verify(secret, r.Header, body, time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		d, err := decodeBody(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d.ID, d.Sent = r.Header.Get(HeaderID), sent
		deliver(d)
		w.WriteHeader(http.StatusNoContent)
	})
}

// decodeBody reads a body: an envelope when it has data, else a plant in
// NewPlant's shape; the plant rules apply to the plant of either.
func decodeBody(body []byte) (Delivery, error) {
	var in bodyJSON
	if err := json.Unmarshal(body, &in); err != nil {
		return Delivery{}, errors.New("the body is not a JSON plant or envelope")
	}
	if in.Data == nil {
		p, err := decodePlant(in.plantJSON)
		return Delivery{Plant: p}, err
	}
	e := in.Data
	switch {
	case in.Type == nil || in.Timestamp == nil:
		return Delivery{}, errors.New("the envelope lacks type or timestamp")
	case e.ID == nil || e.Type == nil || e.Number == nil || e.Time == nil || e.Plant == nil:
		return Delivery{}, errors.New("the envelope's data lacks id, type, number, time or plant")
	case *e.Type != *in.Type:
		return Delivery{}, errors.New("the envelope's type is not its event's")
	}
	p, err := decodePlant(*e.Plant)
	if err != nil {
		return Delivery{}, fmt.Errorf("the event's plant: %w", err)
	}
	return Delivery{Type: *e.Type, EventID: *e.ID, Number: *e.Number, Committed: *e.Time, Plant: p}, nil
}

// decodePlant applies the plant rules to a plant as JSON carried it.
func decodePlant(in plantJSON) (domain.Plant, error) {
	if in.ID == nil {
		return domain.Plant{}, errors.New("the body lacks id")
	}
	return domain.RestorePlant(in.Fields(*in.ID))
}
