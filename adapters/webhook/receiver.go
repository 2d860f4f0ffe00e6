package webhook

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/plantstore/plantstore/domain"
)

// maxReceivedBody bounds what a receiver reads: a plant's body is far
// smaller, and a message must be read whole to be verified.
const maxReceivedBody = 64 << 10

// Delivery is a verified new-plant event, as a receiver gets it.
type Delivery struct {
	// ID is webhook-id: the same on every attempt, so a receiver can drop
	// a repeated delivery.
	ID string
	// Sent is webhook-timestamp, when this attempt was made.
	Sent time.Time
	// Plant is the new plant, checked against the plant rules.
	Plant domain.Plant
}

// plantJSON is the body as JSON carries it. Members this version does not
// know are ignored, so that a receiver keeps working when events grow.
type plantJSON struct {
	ID   *int64  `json:"id"`
	Name *string `json:"name"`
	Tag  *string `json:"tag"`
}

// NewReceiver returns a handler for new-plant events signed with secret: it
// answers 204 and calls deliver for a verified plant, 401 when the
// signature does not verify or the timestamp is stale, 400 when the body is
// not a plant, 405 to anything but POST and 413 to a body over 64 KiB.
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
		plant, err := decodePlant(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		deliver(Delivery{ID: r.Header.Get(HeaderID), Sent: sent, Plant: plant})
		w.WriteHeader(http.StatusNoContent)
	})
}

// decodePlant reads a body in NewPlant's shape and applies the plant rules.
func decodePlant(body []byte) (domain.Plant, error) {
	var in plantJSON
	if err := json.Unmarshal(body, &in); err != nil {
		return domain.Plant{}, errors.New("the body is not a JSON plant")
	}
	if in.ID == nil || in.Name == nil {
		return domain.Plant{}, errors.New("the body lacks id or name")
	}
	return domain.RestorePlant(domain.PlantFields{ID: *in.ID, Name: *in.Name, Tag: in.Tag})
}
