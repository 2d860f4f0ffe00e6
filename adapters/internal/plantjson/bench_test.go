package plantjson

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/go-json-experiment/json"
)

// BenchmarkEncode is each shape the service writes, encoded by the library
// (library) beside the hand-written encoders it replaced (hand), into a
// reused buffer as the API and the webhook use them. Compare with
// benchstat over -count 6.
func BenchmarkEncode(b *testing.B) {
	it := Item{ID: 12345, Plant: Plant{Name: "Monstera deliciosa", Tag: "tropical"}}
	page := make([]Item, 100)
	for i := range page {
		page[i] = Item{ID: int64(i), Plant: Plant{Name: "Plant number " + strconv.Itoa(i), Tag: "tag"}}
	}
	cases := []struct {
		name      string
		lib, hand func([]byte) []byte
	}{
		{"item", func(buf []byte) []byte { return appendItem(buf, it) }, func(buf []byte) []byte { return handAppendItem(buf, it) }},
		{"plant", func(buf []byte) []byte { return appendPlant(buf, it.Plant) }, func(buf []byte) []byte { return handAppendPlant(buf, it.Plant) }},
		{"list100", func(buf []byte) []byte { return appendListByLibrary(buf, page) }, func(buf []byte) []byte { return handAppendList(buf, page) }},
	}
	for _, c := range cases {
		for _, impl := range []struct {
			name string
			fn   func([]byte) []byte
		}{{"impl=library", c.lib}, {"impl=hand", c.hand}} {
			b.Run(c.name+"/"+impl.name, func(b *testing.B) {
				buf := make([]byte, 0, 16<<10)
				b.ReportAllocs()
				for b.Loop() {
					buf = impl.fn(buf[:0])
				}
			})
		}
	}
}

// appendListByLibrary is a page as the library would write it, encoded in
// one call into the buffer: the alternative AppendList was measured against.
func appendListByLibrary(dst []byte, items []Item) []byte {
	buf := bytes.NewBuffer(dst)
	if err := json.MarshalWrite(buf, items, options); err != nil {
		panic(err)
	}
	return buf.Bytes()
}
