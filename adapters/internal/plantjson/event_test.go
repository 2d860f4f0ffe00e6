package plantjson

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// AppendEvent writes, byte for byte, what the library writes for the
// Event transport type, whatever the time's fractional digits, the number
// and the item.
func TestAppendEventIsTheLibrarysEncoding(t *testing.T) {
	item := AppendItem(nil, mustPlant(t, -7, `say "hi" \ 🌵`, ptr("a\u2028b")))
	base := time.Date(2026, 11, 25, 23, 20, 7, 0, time.UTC)
	for _, at := range []time.Time{
		base, base.Add(500 * time.Millisecond), base.Add(123456 * time.Microsecond), base.Add(123456789),
		base.In(time.FixedZone("east", 5*3600)), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		for _, typ := range []string{"plant.created", "plant.changed", "plant.deleted"} {
			for _, number := range []int64{1, 42, 1<<63 - 1} {
				got, err := AppendEvent([]byte("x"), typ, number, at, string(item))
				if err != nil {
					t.Fatal(err)
				}
				want, err := json.Marshal(Event{ID: EventID(number), Type: typ, Number: number, Time: at.UTC(), Plant: item}, options)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != "x"+string(want) {
					t.Fatalf("AppendEvent = %s\nthe library: %s", got[1:], want)
				}
			}
		}
	}
}

// An item that is not one JSON object leaves the page as it was.
func TestAppendEventRefusesWhatIsNotAnItem(t *testing.T) {
	for _, item := range []string{"", "{", `"x"`, "[1]", "{\"id\":1,\n\"name\":\"a\"}"} {
		if got, err := AppendEvent([]byte("[x"), "plant.created", 1, time.Now(), item); err == nil || string(got) != "[x" {
			t.Errorf("AppendEvent of item %q = %s, %v; want an error and the page as it was", item, got, err)
		}
	}
}

// BenchmarkEventPage is a page of 100 events of one commit, by hand
// (impl=hand: AppendEvent for each), by the library (impl=library) and as
// the stores render it (impl=writer: an EventWriter for the page).
func BenchmarkEventPage(b *testing.B) {
	items := make([]string, 100)
	for i := range items {
		items[i] = `{"id":` + strconv.Itoa(1000+i) + `,"name":"Monstera deliciosa","tag":"indoor"}`
	}
	at := time.Date(2026, 11, 25, 23, 20, 7, 123456000, time.UTC)
	type appendFunc = func(dst []byte, typ string, number int64, at time.Time, item string) ([]byte, error)
	for _, impl := range []struct {
		name string
		page func() appendFunc // the function that appends a page's events
	}{
		{"impl=hand", func() appendFunc { return AppendEvent }},
		{"impl=library", func() appendFunc { return libraryAppendEvent }},
		{"impl=writer", func() appendFunc { return new(EventWriter).Append }},
	} {
		b.Run(impl.name, func(b *testing.B) {
			buf := make([]byte, 0, 32<<10)
			b.ReportAllocs()
			for b.Loop() {
				appendEvent := impl.page()
				buf = append(buf[:0], '[')
				for i, it := range items {
					if i > 0 {
						buf = append(buf, ',')
					}
					buf, _ = appendEvent(buf, "plant.created", int64(i+1), at, it)
				}
				buf = append(buf, ']')
			}
		})
	}
}

// libraryAppendEvent is the event as the library writes it, into dst.
func libraryAppendEvent(dst []byte, typ string, number int64, at time.Time, item string) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	err := json.MarshalWrite(buf, Event{ID: EventID(number), Type: typ, Number: number, Time: at.UTC(), Plant: []byte(item)}, options)
	return buf.Bytes(), err
}

// An envelope is the Standard Webhooks envelope of the event as the feed
// lists it: its type, the commit time in UTC as its timestamp, and the
// event itself, byte for byte as AppendEvent writes it, as its data.
func TestAppendEnvelope(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 31, 12, 500_000_000, time.FixedZone("CET", 3600))
	item := AppendItem(nil, mustPlant(t, 7, "Fern \"2\"", ptr("green")))
	event, err := AppendEvent(nil, "plant.changed", 1042, at, string(item))
	if err != nil {
		t.Fatal(err)
	}
	got, err := AppendEnvelope([]byte("x"), "plant.changed", 1042, at, item)
	if err != nil {
		t.Fatal(err)
	}
	want := `x{"type":"plant.changed","timestamp":"2026-12-01T09:31:12.5Z","data":` + string(event) + `}`
	if string(got) != want {
		t.Errorf("AppendEnvelope = %s\nwant             %s", got, want)
	}
	if wantEvent := `{"id":"evt_1042","type":"plant.changed","number":1042,"time":"2026-12-01T09:31:12.5Z","plant":{"id":7,"name":"Fern \"2\"","tag":"green"}}`; string(event) != wantEvent {
		t.Errorf("AppendEvent = %s\nwant          %s", event, wantEvent)
	}
	if out, err := AppendEnvelope([]byte("x"), "plant.deleted", 1, at, []byte(`{"id":`)); err == nil || string(out) != "x" {
		t.Errorf("an item that is not JSON: %q, %v; want an error and dst as it was", out, err)
	}
}

// A writer that keeps the text of the last time writes every event as
// AppendEvent does alone, whether its time is the last one's or not.
func TestEventWriterWritesEachEventsOwnTime(t *testing.T) {
	t1 := time.Date(2026, 11, 25, 23, 20, 7, 123456000, time.UTC)
	t2 := t1.Add(time.Microsecond)
	t3 := t1.In(time.FixedZone("UTC+2", 2*3600)) // t1, elsewhere
	var w EventWriter
	for k, at := range []time.Time{t1, t1, t2, t3, t1, {}, t2} {
		item := `{"id":` + strconv.Itoa(k) + `,"name":"Fern"}`
		got, err := w.Append([]byte("[x,"), "plant.changed", int64(k+1), at, item)
		want, err2 := AppendEvent([]byte("[x,"), "plant.changed", int64(k+1), at, item)
		if err != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("event %d at %s: %s, %v; want %s, %v", k, at, got, err, want, err2)
		}
	}
}
