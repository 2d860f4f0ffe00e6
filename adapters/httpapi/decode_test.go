package httpapi

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/domain"
)

func TestDecodeAcceptsValidPlants(t *testing.T) {
	cactus200 := strings.Repeat("🌵", 200)
	tests := []struct {
		name, body string
		id         int64
		plantName  string
		tag        string
	}{
		{"minimal", `{"id":1,"name":"Aloe"}`, 1, "Aloe", ""},
		{"with tag", `{"id":7,"name":"Aloe","tag":"succulent"}`, 7, "Aloe", "succulent"},
		{"null tag means none", `{"id":7,"name":"Aloe","tag":null}`, 7, "Aloe", ""},
		{"any key order and white space", " \r\n\t{ \"tag\" : \"x\" , \"name\" : \"Aloe\" , \"id\" : -3 } \n", -3, "Aloe", "x"},
		{"int64 max", `{"id":9223372036854775807,"name":"a"}`, math.MaxInt64, "a", ""},
		{"int64 min", `{"id":-9223372036854775808,"name":"a"}`, math.MinInt64, "a", ""},
		{"minus zero is zero", `{"id":-0,"name":"a"}`, 0, "a", ""},
		{"200 four-byte characters", `{"id":1,"name":"` + cactus200 + `"}`, 1, cactus200, ""},
		{"escaped surrogate pair", `{"id":1,"name":"\ud83c\udf35"}`, 1, "🌵", ""},
		{"escapes decoded", `{"id":1,"name":"a\"b\\c\/d\u00e9"}`, 1, `a"b\c/dé`, ""},
		{"spaces kept", `{"id":1,"name":"  Aloe  "}`, 1, "  Aloe  ", ""},
		{"escaped key", `{"id":1,"n\u0061me":"Aloe"}`, 1, "Aloe", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			np, err := decodeNewPlant([]byte(tt.body))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if int64(np.ID) != tt.id || np.Name.String() != tt.plantName || np.Tag.String() != tt.tag {
				t.Fatalf("got id=%d name=%q tag=%q", np.ID, np.Name, np.Tag)
			}
		})
	}
}

func TestDecodeRefusesMalformedBodies(t *testing.T) {
	// jsontext allows 10,000 levels of nesting; the object itself is one.
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	tests := map[string]string{
		"empty":                 ``,
		"white space only":      "  \n",
		"not an object":         `[{"id":1,"name":"a"}]`,
		"string":                `"x"`,
		"syntax error":          `{"id":1,"name":"a"`,
		"trailing comma":        `{"id":1,"name":"a",}`,
		"trailing data":         `{"id":1,"name":"a"} {}`,
		"trailing garbage":      `{"id":1,"name":"a"}x`,
		"two objects":           `{"id":1,"name":"a"}{"id":2,"name":"b"}`,
		"duplicate key":         `{"id":1,"name":"a","name":"b"}`,
		"duplicate via escape":  `{"id":1,"name":"a","n\u0061me":"b"}`,
		"duplicate unknown key": `{"id":1,"name":"a","x":1,"x":2}`,
		"duplicate nested key":  `{"id":1,"name":"a","x":{"k":1,"k":2}}`,
		"invalid UTF-8":         "{\"id\":1,\"name\":\"a\xff\"}",
		"byte order mark":       "\xef\xbb\xbf{\"id\":1,\"name\":\"a\"}",
		"raw control character": "{\"id\":1,\"name\":\"a\tb\"}",
		"raw NUL":               "{\"id\":1,\"name\":\"a\x00\"}",
		"leading zero":          `{"id":01,"name":"a"}`,
		"plus sign":             `{"id":+1,"name":"a"}`,
		"bare dot":              `{"id":1.,"name":"a"}`,
		"single quotes":         `{'id':1,'name':'a'}`,
		"bad escape":            `{"id":1,"name":"\x"}`,
		"short unicode escape":  `{"id":1,"name":"\u12"}`,
		"unterminated string":   `{"id":1,"name":"abc`,
		"NaN":                   `{"id":NaN,"name":"a"}`,
		"too deep":              `{"id":1,"name":"a","x":` + deep + `}`,
		"bad literal":           `{"id":1,"name":"a","tag":nul}`,
		"comment":               `{"id":1,/*c*/"name":"a"}`,
		"lone surrogate":        `{"id":1,"name":"\ud800"}`,
		"lone low surrogate":    `{"id":1,"name":"a","tag":"\udc00"}`,
		"surrogate then letter": `{"id":1,"name":"\ud800\u0041"}`,
		"lone surrogate in key": `{"id":1,"name":"a","\ud800":1}`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := decodeNewPlant([]byte(body))
			var se *syntaxError
			if !errors.As(err, &se) || !errors.Is(err, errSyntax) {
				t.Fatalf("want a syntax error, got %v", err)
			}
		})
	}
}

func TestDecodeNamesTheOffendingField(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"missing id", `{"name":"a"}`, "id: is required"},
		{"missing name", `{"id":1}`, "name: is required"},
		{"empty object", `{}`, "id: is required; name: is required"},
		{"id as string", `{"id":"7","name":"a"}`, "id: must be an integer"},
		{"id with fraction", `{"id":7.0,"name":"a"}`, "id: must be an integer"},
		{"id with exponent", `{"id":7e0,"name":"a"}`, "id: must be an integer"},
		{"id null", `{"id":null,"name":"a"}`, "id: must be an integer"},
		{"id above int64", `{"id":9223372036854775808,"name":"a"}`, "id: must be within the signed 64-bit range"},
		{"id below int64", `{"id":-9223372036854775809,"name":"a"}`, "id: must be within the signed 64-bit range"},
		{"huge id", `{"id":` + strings.Repeat("9", 400) + `,"name":"a"}`, "id: must be within the signed 64-bit range"},
		{"name number", `{"id":1,"name":5}`, "name: must be a string"},
		{"name null", `{"id":1,"name":null}`, "name: must be a string"},
		{"name empty", `{"id":1,"name":""}`, "name: must not be empty"},
		{"name blank", `{"id":1,"name":" \u3000 "}`, "name: must not be only white space"},
		{"name control", `{"id":1,"name":"a\u0007"}`, "name: must not contain control characters"},
		{"name DEL", `{"id":1,"name":"a\u007f"}`, "name: must not contain control characters"},
		{"name too long", `{"id":1,"name":"` + strings.Repeat("é", 201) + `"}`, "name: must be at most 200 characters"},
		{"tag empty", `{"id":1,"name":"a","tag":""}`, "tag: must not be empty"},
		{"tag number", `{"id":1,"name":"a","tag":1}`, "tag: must be a string or null"},
		{"tag too long", `{"id":1,"name":"a","tag":"` + strings.Repeat("x", 65) + `"}`, "tag: must be at most 64 characters"},
		{"unknown field", `{"id":1,"name":"a","color":"green"}`, "color: unknown field"},
		{"case matters", `{"id":1,"Name":"a"}`, "Name: unknown field; name: is required"},
		{"nesting in an unknown field", `{"id":1,"name":"a","x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, "x: unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeNewPlant([]byte(tt.body))
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("want a field error, got %v", err)
			}
			if err.Error() != tt.want {
				t.Fatalf("message: got %q, want %q", err.Error(), tt.want)
			}
		})
	}
}

func TestDecodeNamesAFewUnknownFieldsAndCountsTheRest(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"id":1,"name":"a"`)
	for i := range 1000 {
		b.WriteString(`,"k` + strconv.Itoa(i) + `":0`)
	}
	b.WriteString("}")
	_, err := decodeNewPlant([]byte(b.String()))
	want := "k0: unknown field; k1: unknown field; k2: unknown field; k3: unknown field; k4: unknown field; body: 995 more unknown fields"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v", err)
	}
}

func TestDecodeSyntaxBeatsFieldErrors(t *testing.T) {
	_, err := decodeNewPlant([]byte(`{"Name":1, "id":"x"`))
	if !errors.Is(err, errSyntax) {
		t.Fatalf("a broken body must be 40001 even when its fields are also wrong, got %v", err)
	}
}

// FuzzDecodeNewPlant checks the decoder against encoding/json: it never
// panics, it accepts only valid JSON, and what it accepts means the same to
// encoding/json.
func FuzzDecodeNewPlant(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"name":"Aloe","tag":"succulent"}`, `{"id":-9223372036854775808,"name":"a","tag":null}`,
		`{"id":1.5,"name":"a"}`, `{"id":1,"name":"\ud83c\udf35\u0000"}`, `{"id":1,"name":"a","x":[{"y":[1,2,{"z":null}]}]}`,
		`{"id":1,"name":"a"} x`, "\xef\xbb\xbf{}", `{"id":1,"name":"\ud800\u0041"}`, `[]`, `{"id":1e400,"name":"a"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		np, err := decodeNewPlant(body)
		if err != nil {
			if !errors.Is(err, errSyntax) && !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if errors.Is(err, domain.ErrInvalid) && !json.Valid(body) {
				t.Fatalf("field error for a body encoding/json finds invalid: %q", body)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		var v struct {
			ID   json.Number `json:"id"`
			Name string      `json:"name"`
			Tag  *string     `json:"tag"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("accepted %q that encoding/json refuses: %v", body, err)
		}
		if v.ID.String() != strconv.FormatInt(int64(np.ID), 10) && v.ID.String() != "-0" {
			t.Fatalf("id: got %d, encoding/json %s", np.ID, v.ID)
		}
		if v.Name != np.Name.String() {
			t.Fatalf("name: got %q, encoding/json %q", np.Name, v.Name)
		}
		if got := np.Tag.String(); (v.Tag == nil && got != "") || (v.Tag != nil && *v.Tag != got) {
			t.Fatalf("tag: got %q, encoding/json %v", got, v.Tag)
		}
	})
}

// Decoding targets are recycled: nothing of one body may show in the next.
func TestDecodeForgetsThePreviousBody(t *testing.T) {
	for range 3 {
		if _, err := decodeNewPlant([]byte(`{"id":1,"name":"a","tag":"x","color":"green"}`)); err == nil {
			t.Fatal("an unknown field was accepted")
		}
		np, err := decodeNewPlant([]byte(`{"name":"b","id":2}`))
		if err != nil || np.ID != 2 || np.Name.String() != "b" || np.Tag.IsSet() {
			t.Fatalf("got %+v, %v, want plant 2 named b without a tag", np, err)
		}
		if _, err := decodeNewPlant([]byte(`{"name":"c"}`)); err == nil || err.Error() != "id: is required" {
			t.Fatalf("got %v, want only id: is required", err)
		}
	}
}
