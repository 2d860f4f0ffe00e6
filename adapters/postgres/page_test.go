package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/plantstore/plantstore/application"
)

func TestPageOfCutsTheExtraPlantOff(t *testing.T) {
	const (
		a = `{"id":-7,"name":"a"}`
		b = `{"id":3,"name":"b ,{\"id\":99,","tag":"t"}` // a name that looks like an item
		c = `{"id":12,"name":"c","tag":"{\"id\":1}"}`
	)
	for _, tt := range []struct {
		items    string
		count    int
		limit    int
		greatest int64
		want     application.Page
	}{
		{"", 0, 5, 0, application.Page{JSON: []byte("[]")}},
		{a, 1, 5, -7, application.Page{JSON: []byte("[" + a + "]"), Count: 1, Last: -7}},
		{a + "," + b, 2, 2, 3, application.Page{JSON: []byte("[" + a + "," + b + "]"), Count: 2, Last: 3}},
		{a + "," + b + "," + c, 3, 2, 12, application.Page{JSON: []byte("[" + a + "," + b + "]"), Count: 2, Last: 3, More: true}},
		{a + "," + b, 2, 1, 3, application.Page{JSON: []byte("[" + a + "]"), Count: 1, Last: -7, More: true}},
	} {
		got, err := pageOf(tt.items, tt.count, tt.limit, tt.greatest)
		if err != nil || string(got.JSON) != string(tt.want.JSON) || got.Count != tt.want.Count ||
			got.Last != tt.want.Last || got.More != tt.want.More {
			t.Errorf("pageOf(%s, %d, %d) = %s %d %d %v, %v; want %s %d %d %v", tt.items, tt.count, tt.limit,
				got.JSON, got.Count, got.Last, got.More, err, tt.want.JSON, tt.want.Count, tt.want.Last, tt.want.More)
		}
	}
}

// Items out of id order are a fault, never a page with a wrong next link.
func TestPageOfRefusesItemsOutOfOrder(t *testing.T) {
	items := `{"id":12,"name":"c"},{"id":3,"name":"b"}`
	if page, err := pageOf(items, 2, 5, 12); err == nil {
		t.Fatalf("pageOf = %s, nil; want an error", page.JSON)
	}
}

// A position is expired exactly when it was handed out longer ago than the
// retention, by the database's clock and to the microsecond, and the next
// one a page hands out says when, to the microsecond too: a position that
// said a whole second would look up to a second older than it is.
func TestFeedPositionsExpireAtTheRetention(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 987654000, time.UTC)
	r := feedRow{N: 1, Now: now, FloorXID: "0"}
	for _, tt := range []struct {
		age     time.Duration
		expired bool
	}{
		{time.Second - time.Microsecond, false},
		{time.Second, false},
		{time.Second + time.Microsecond, true},
	} {
		q := application.FeedQuery{After: application.FeedPosition{Tx: 50, At: now.Add(-tt.age)}, HasAfter: true, Limit: 10, Retention: application.EventRetention(time.Second)}
		page, _, err := feedPage(r, q, 11)
		if expired := errors.Is(err, application.ErrFeedExpired); expired != tt.expired || err != nil && !expired {
			t.Errorf("a position %s old, retention 1s: %v; want expired %v", tt.age, err, tt.expired)
		}
		if err == nil && !page.Next.At.Equal(now) {
			t.Errorf("the next position says %s; want %s", page.Next.At.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
		}
	}
}
