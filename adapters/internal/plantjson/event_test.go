package plantjson

import (
	"testing"
	"time"
)

// An envelope is the Standard Webhooks envelope of the event as the feed
// lists it: its type, the commit time in UTC as its timestamp, and the
// event itself, byte for byte as AppendEvent writes it, as its data.
func TestAppendEnvelope(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 31, 12, 500_000_000, time.FixedZone("CET", 3600))
	item := AppendItem(nil, mustPlant(t, 7, "Fern \"2\"", ptr("green")))
	event, err := AppendEvent(nil, "plant.changed", 1042, at, item)
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
