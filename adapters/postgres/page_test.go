package postgres

import (
	"testing"

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
