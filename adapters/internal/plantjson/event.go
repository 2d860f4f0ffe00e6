package plantjson

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Event is the Event schema: one committed write of a plant as the event
// feed lists it. Plant is the plant's item as the store kept it with the
// event, AppendItem's bytes when the write was committed, passed through.
// AppendEvent writes it by hand; the library's encoding of this type is
// what a test holds those bytes to.
type Event struct {
	ID     string         `json:"id"`
	Type   string         `json:"type"`
	Number int64          `json:"number"`
	Time   time.Time      `json:"time"`
	Plant  jsontext.Value `json:"plant"`
}

// EventID is the id of the event numbered number: numbers are unique in a
// store and never reused, so the id is as stable as the event.
func EventID(number int64) string { return "evt_" + strconv.FormatInt(number, 10) }

// AppendEvent appends the event numbered number, of type typ, committed at
// at, about the plant whose item is item:
// {"id":"evt_12","type":"plant.changed","number":12,"time":"...","plant":{...}}.
// The time is in UTC, RFC 3339 with as many fractional digits as it has.
//
// It is written by hand, not by the library as the plant's item is: a page
// of 100 events took the library 123 to 164 µs (500 allocations), more than
// a whole page of plants costs the service, and takes this 9 µs and no
// allocation (BenchmarkEventPage; docs/performance.md, "The event feed").
// TestAppendEventIsTheLibrarysEncoding holds its bytes to the library's.
// The item is the store's text, rendered by AppendItem when the event was
// written, so it is only checked to be one object on one line, not parsed
// again; one that is not (a row written around the service) is an error,
// and dst is returned as it was.
func AppendEvent(dst []byte, typ string, number int64, at time.Time, item string) ([]byte, error) {
	return appendEvent(dst, typ, number, at, nil, item)
}

// EventWriter appends the events of a page as AppendEvent does, formatting
// each time once for the events that follow it with the same time: the
// events of one commit share their time, and formatting it was the largest
// part of writing an event. Its zero value is ready to use; it is not to
// be copied once used.
type EventWriter struct {
	at    time.Time
	text  []byte   // at, in RFC 3339; nil before the first event
	space [40]byte // for text: RFC 3339 with nanoseconds is at most 35 bytes
}

// Append appends one event, as AppendEvent.
func (w *EventWriter) Append(dst []byte, typ string, number int64, at time.Time, item string) ([]byte, error) {
	if w.text == nil || !at.Equal(w.at) {
		w.at, w.text = at, at.UTC().AppendFormat(w.space[:0], time.RFC3339Nano)
	}
	return appendEvent(dst, typ, number, at, w.text, item)
}

// appendEvent is AppendEvent, with at already formatted as atText unless
// that is nil.
func appendEvent(dst []byte, typ string, number int64, at time.Time, atText []byte, item string) ([]byte, error) {
	if len(item) < 2 || item[0] != '{' || item[len(item)-1] != '}' || strings.IndexByte(item, '\n') >= 0 {
		return dst, fmt.Errorf("plantjson: event %d: %w", number, errNotAnItem)
	}
	dst = append(dst, `{"id":"evt_`...)
	start := len(dst)
	dst = strconv.AppendInt(dst, number, 10)
	end := len(dst)
	dst = append(dst, `","type":`...)
	dst, _ = jsontext.AppendQuote(dst, typ)
	dst = append(dst, `,"number":`...)
	dst = append(dst, dst[start:end]...) // the id's digits
	dst = append(dst, `,"time":"`...)
	if atText != nil {
		dst = append(dst, atText...)
	} else {
		dst = at.UTC().AppendFormat(dst, time.RFC3339Nano)
	}
	dst = append(dst, `","plant":`...)
	dst = append(dst, item...)
	return append(dst, '}'), nil
}

// Envelope is the body of a webhook delivery with the event payload: the
// Standard Webhooks envelope, whose data is the event as the feed lists it
// and whose timestamp is the event's commit.
type Envelope struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      Event     `json:"data"`
}

// AppendEnvelope appends the envelope of the event that AppendEvent would
// append for the same arguments:
// {"type":"plant.changed","timestamp":"...","data":{"id":"evt_12",...}}.
// An item that is not one valid JSON value is an error, and dst is
// returned as it was.
func AppendEnvelope(dst []byte, typ string, number int64, at time.Time, item []byte) ([]byte, error) {
	s := getScratch(dst)
	at = at.UTC()
	s.envelope = Envelope{Type: typ, Timestamp: at, Data: Event{ID: EventID(number), Type: typ, Number: number, Time: at, Plant: item}}
	err := json.MarshalWrite(&s.buf, &s.envelope, options)
	out := s.done()
	if err != nil {
		return dst, fmt.Errorf("plantjson: envelope of event %d: %w", number, err)
	}
	return out, nil
}

var errNotAnItem = errors.New("the stored item is not a JSON object")
