package plantjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/plantstore/plantstore/domain"
)

func mustPlant(t testing.TB, id int64, name string, tag *string) domain.Plant {
	t.Helper()
	p, err := domain.RestorePlant(domain.PlantFields{ID: id, Name: name, Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ptr(s string) *string { return &s }

// The bytes every answer and every webhook body pin: key order id, name,
// tag; tag left out when there is none; stored text kept as it is, only
// what JSON requires escaped.
func TestAppendItem(t *testing.T) {
	tests := []struct {
		name  string
		plant domain.Plant
		want  string
	}{
		{"with a tag", mustPlant(t, 7, "Fern", ptr("green")), `{"id":7,"name":"Fern","tag":"green"}`},
		{"without a tag", mustPlant(t, -3, "Fern", nil), `{"id":-3,"name":"Fern"}`},
		{"id zero", mustPlant(t, 0, "Fern", nil), `{"id":0,"name":"Fern"}`},
		{"largest id", mustPlant(t, 9223372036854775807, "Fern", nil), `{"id":9223372036854775807,"name":"Fern"}`},
		{"smallest id", mustPlant(t, -9223372036854775808, "Fern", nil), `{"id":-9223372036854775808,"name":"Fern"}`},
		{"unicode kept as is", mustPlant(t, 9, "Ficus 🌿 Größe 大", ptr("e\u0301té\u2028")), "{\"id\":9,\"name\":\"Ficus 🌿 Größe 大\",\"tag\":\"e\u0301té\u2028\"}"},
		{"U+2029 and U+3000 kept", mustPlant(t, 1, "a\u2029b\u3000c", nil), "{\"id\":1,\"name\":\"a\u2029b\u3000c\"}"},
		{"quotes and backslashes escaped, HTML not", mustPlant(t, 0, `say "hi" \ <b>&amp;</b>`, ptr(`C:\plants\`)), `{"id":0,"name":"say \"hi\" \\ <b>&amp;</b>","tag":"C:\\plants\\"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendItem([]byte("x"), tt.plant)
			if string(got) != "x"+tt.want {
				t.Errorf("AppendItem = %s\nwant          x%s", got, tt.want)
			}
			if want := handAppendItem(nil, FromDomain(tt.plant)); string(got[1:]) != string(want) {
				t.Errorf("AppendItem = %s, the hand-written encoder %s", got[1:], want)
			}
		})
	}
}

func TestAppendPlant(t *testing.T) {
	for _, tt := range []struct {
		plant domain.Plant
		want  string
	}{
		{mustPlant(t, 7, "Fern", ptr("green")), `{"name":"Fern","tag":"green"}`},
		{mustPlant(t, 7, "Fern", nil), `{"name":"Fern"}`},
		{mustPlant(t, -12, "Fern, red", ptr("a,b")), `{"name":"Fern, red","tag":"a,b"}`},
		{mustPlant(t, 7, "<Fern & \"co\">", ptr("a\u2028b")), "{\"name\":\"<Fern & \\\"co\\\">\",\"tag\":\"a\u2028b\"}"},
	} {
		if got := string(AppendPlant(nil, tt.plant)); got != tt.want {
			t.Errorf("AppendPlant = %s, want %s", got, tt.want)
		}
		if got := string(CutPlant(AppendItem([]byte("x"), tt.plant))); got != tt.want {
			t.Errorf("CutPlant(AppendItem) = %s, want %s", got, tt.want)
		}
	}
}

// Text the plant rules refuse (control characters, invalid UTF-8) is still
// encoded exactly as the hand-written encoders did, so that no answer can
// change should the rules ever let it in.
func TestEscapingMatchesTheHandWrittenEncoders(t *testing.T) {
	for _, s := range []string{
		"Monstera deliciosa",
		`say "hi" \ bye`,
		"a\nb\rc\td\x00e\x1f\b\f",
		"<script>&amp;</script>",
		"é 🌵 \u2028 \u2029 \u3000 \x7f \ufffd",
		"a\xffb",
		"\xed\xa0\x80 surrogate",
		"",
	} {
		it := Item{ID: 1, Plant: Plant{Name: s, Tag: s}}
		checkSame(t, it)
	}
}

// FuzzSameAsHandWritten checks the library's output against the
// hand-written encoders' for any text and id.
func FuzzSameAsHandWritten(f *testing.F) {
	f.Add(int64(7), "Fern", "green")
	f.Add(int64(-1), "a\x00\u2028<>&\"\\", "")
	f.Add(int64(0), "a\xffb", "\xed\xa0\x80")
	f.Fuzz(func(t *testing.T, id int64, name, tag string) {
		checkSame(t, Item{ID: id, Plant: Plant{Name: name, Tag: tag}})
	})
}

func checkSame(t *testing.T, it Item) {
	t.Helper()
	if got, want := appendItem([]byte("x"), it), handAppendItem([]byte("x"), it); !bytes.Equal(got, want) {
		t.Errorf("item %q: library %s, hand-written %s", it.Name, got, want)
	}
	if got, want := appendPlant(nil, it.Plant), handAppendPlant(nil, it.Plant); !bytes.Equal(got, want) {
		t.Errorf("plant %q: library %s, hand-written %s", it.Name, got, want)
	}
	if got, want := CutPlant(appendItem(nil, it)), appendPlant(nil, it.Plant); !bytes.Equal(got, want) {
		t.Errorf("plant %q cut from its item: %s, rendered: %s", it.Name, got, want)
	}
	got := appendItem(nil, it)
	if !json.Valid(got) {
		t.Errorf("item %q: %s is not JSON", it.Name, got)
	}
}

// A plant read back from the item AppendItem renders, through Fields, is the
// plant rendered: with every field set (every field of domain.PlantFields,
// found by reflection, so that a field Fields leaves out fails here) and
// with every optional one left out. Receivers read plants so.
func TestFieldsReadBackTheRenderedPlant(t *testing.T) {
	every, err := domain.RestorePlant(longestFields(t, "x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []domain.Plant{every, mustPlant(t, 1, "Fern", nil)} {
		var in struct {
			ID    int64 `json:"id"`
			Plant `json:",inline"`
		}
		if err := jsonv2.Unmarshal(AppendItem(nil, p), &in); err != nil {
			t.Fatal(err)
		}
		got, err := domain.RestorePlant(in.Fields(in.ID))
		if err != nil || got != p {
			t.Errorf("read back %s, %v; rendered %s: domain.PlantFields.%v differ", AppendItem(nil, got), err, AppendItem(nil, p), differing(got.Fields(), p.Fields()))
		}
	}
}

// differing names the fields that differ between a and b, a field a plant
// may lack (a pointer) compared by what it points at: the fields a
// rendering lost show here when the renderings look the same.
func differing(a, b domain.PlantFields) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var names []string
	for i := range va.NumField() {
		fa, fb := reflect.Indirect(va.Field(i)), reflect.Indirect(vb.Field(i))
		if fa.IsValid() != fb.IsValid() || fa.IsValid() && !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			names = append(names, va.Type().Field(i).Name)
		}
	}
	return names
}
