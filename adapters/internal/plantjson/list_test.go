package plantjson

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/plantstore/plantstore/domain"
)

// libraryList is what the library writes for a page in one call: the
// reference that AppendList's bytes are held to.
func libraryList(t testing.TB, items []Item) []byte {
	t.Helper()
	if items == nil {
		items = []Item{}
	}
	out, err := json.Marshal(items, options)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAppendList(t *testing.T) {
	if got := string(AppendList(nil, nil)); got != "[]" {
		t.Errorf("no plants = %s, want []", got)
	}
	plants := []domain.Plant{
		mustPlant(t, 1, "A", nil),
		mustPlant(t, 2, "B", ptr("t")),
		mustPlant(t, -9223372036854775808, `<say "hi"> \ & é 🌵 a`+"\u2028\u2029b", ptr("C:\\x\u3000y")),
	}
	want := `[{"id":1,"name":"A"},{"id":2,"name":"B","tag":"t"},` +
		`{"id":-9223372036854775808,"name":"<say \"hi\"> \\ & é 🌵 a` + "\u2028\u2029" + `b","tag":"C:\\x` + "\u3000" + `y"}]`
	got := AppendList([]byte("x"), plants)
	if string(got) != "x"+want {
		t.Errorf("AppendList = %s\nwant           x%s", got, want)
	}
	items := make([]Item, len(plants))
	for i, p := range plants {
		items[i] = FromDomain(p)
	}
	if lib := libraryList(t, items); !bytes.Equal(got[1:], lib) {
		t.Errorf("AppendList = %s, the library %s", got[1:], lib)
	}
}
