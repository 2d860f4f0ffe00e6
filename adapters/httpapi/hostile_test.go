package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/plantstore/plantstore/domain"
)

// manyKeys is n distinct members "k0":0,"k1":1,...
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	return b.String()
}

// Objects with more than a handful of keys switch to a set to find
// duplicates (jsontext: past 64 names); a duplicate must still be found
// there, in any spelling.
func TestDecodeRefusesDuplicatesAmongManyKeys(t *testing.T) {
	tests := map[string]string{
		"unknown key at top level":      `{"id":1,"name":"a",` + manyKeys(100) + `,"k50":0}`,
		"escaped unknown key":           `{"id":1,"name":"a",` + manyKeys(100) + `,"k\u0035\u0030":0}`,
		"known key after many":          `{"id":1,"name":"a",` + manyKeys(100) + `,"id":1}`,
		"first key repeated last":       `{"k0":0,` + manyKeys(100)[len(`"k0":0,`):] + `,"id":1,"name":"a","k0":0}`,
		"nested key":                    `{"id":1,"name":"a","x":{` + manyKeys(100) + `,"k99":0}}`,
		"nested key right after switch": `{"id":1,"name":"a","x":{` + manyKeys(17) + `,"k16":0}}`,
		"right after jsontext's switch": `{"id":1,"name":"a","x":{` + manyKeys(66) + `,"k65":0}}`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := decodeNewPlant([]byte(body))
			if !errors.Is(err, errSyntax) || !strings.Contains(err.Error(), "duplicate key") {
				t.Fatalf("want a duplicate key error, got %v", err)
			}
		})
	}
	t.Run("distinct keys are not duplicates", func(t *testing.T) {
		_, err := decodeNewPlant([]byte(`{"id":1,"name":"a",` + manyKeys(2000) + `,"x":{` + manyKeys(2000) + `}}`))
		if !errors.Is(err, domain.ErrInvalid) || !strings.HasPrefix(err.Error(), "k0: unknown field; k1: unknown field") {
			t.Fatalf("want unknown field errors, got %.200v", err)
		}
	})
}

// A client's key is repeated in the message only in part, and the message
// stays a JSON string whatever the key holds.
func TestHostileKeysAreEchoedSafely(t *testing.T) {
	api := newTestAPI(t, seededStore(t), DefaultMaxBodyBytes)
	tests := map[string]struct{ key, want string }{
		"huge key":       {strings.Repeat("k", 60000), strings.Repeat("k", maxKeyEcho) + "…: unknown field"},
		"huge multibyte": {strings.Repeat("🌵", 10000), strings.Repeat("🌵", maxKeyEcho) + "…: unknown field"},
		"line breaks":    {`a\r\nX-Injected: 1`, "a\r\nX-Injected: 1: unknown field"},
		"quotes and NUL": {`\"\u0000<script>`, "\"\x00<script>: unknown field"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w := serve(t, api, "POST", "/plants", `{"id":2,"name":"a","`+tt.key+`":1}`)
			if code, msg := errorBody(t, w); w.Code != 400 || code != 40002 || msg != tt.want {
				t.Fatalf("got %d %d %.100q, want 400 40002 %.100q", w.Code, code, msg, tt.want)
			}
			if w.Header().Get("X-Injected") != "" {
				t.Fatal("a key became a header")
			}
		})
	}
}

// endlessBody is a body that never ends; it counts what was read of it.
type endlessBody struct{ read int }

func (b *endlessBody) Read(p []byte) (int, error) {
	n := min(len(p), 512)
	for i := range n {
		p[i] = ' '
	}
	b.read += n
	return n, nil
}

// A body of unknown length (chunked) is read only until it passes the limit.
func TestBodyReadingStopsAtTheLimit(t *testing.T) {
	const limit = 4096
	api := newTestAPI(t, seededStore(t), limit)

	endless := &endlessBody{}
	r := httptest.NewRequest("POST", "/plants", endless)
	r.ContentLength = -1
	w := sendJSON(t, api, r)
	if code, _ := errorBody(t, w); w.Code != 413 || code != 41301 {
		t.Fatalf("endless body: got %d %d, want 413 41301", w.Code, code)
	}
	if endless.read > limit+512 {
		t.Fatalf("read %d bytes of an endless body with a %d-byte limit", endless.read, limit)
	}

	exact := `{"id":2,"name":"a"}` + strings.Repeat(" ", limit-len(`{"id":2,"name":"a"}`))
	for _, tt := range []struct {
		body   string
		status int
	}{{exact, 200}, {exact + " ", 413}} {
		r := httptest.NewRequest("POST", "/plants", strings.NewReader(tt.body))
		r.ContentLength = -1
		if w := sendJSON(t, api, r); w.Code != tt.status {
			t.Fatalf("%d-byte body of unknown length: got %d %s, want %d", len(tt.body), w.Code, w.Body, tt.status)
		}
	}
}

// brokenBody fails part way, as a body with a broken chunked encoding does.
type brokenBody struct{ sent bool }

func (b *brokenBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"id":2,"na`), nil
	}
	return 0, errors.New("http: malformed chunked encoding")
}

func TestUnreadableBodyIsMalformed(t *testing.T) {
	api := newTestAPI(t, seededStore(t), DefaultMaxBodyBytes)
	r := httptest.NewRequest("POST", "/plants", &brokenBody{})
	r.ContentLength = -1
	w := sendJSON(t, api, r)
	if code, msg := errorBody(t, w); w.Code != 400 || code != 40001 || strings.Contains(msg, "chunked") {
		t.Fatalf("got %d %d %q, want 400 40001 without the reader's error", w.Code, code, msg)
	}
}

// chi answers a method it does not know with 405 on any path; the contract
// checks the route first. A 405 lists the methods the router has for the
// path, a 404 none.
func TestUnknownMethodsAnswerByRoute(t *testing.T) {
	api := newTestAPI(t, seededStore(t), DefaultMaxBodyBytes)
	tests := []struct {
		method, path string
		status       int
	}{
		{"FOO", "/nope", 404},
		{"BREW", "/", 404},
		{"PATCH", "/nope", 404},
		{"FOO", "/plants", 405},
		{"PATCH", "/plants", 405},
		{"OPTIONS", "/plants", 405},
		{"PUT", "/plants/7", 405},
		{"FOO", "/plants/7", 405},
		{"FOO", "/openapi.yaml", 405},
		{"POST", "/openapi.yaml", 405},
	}
	for _, tt := range tests {
		w := serve(t, api, tt.method, tt.path, "")
		code, _ := errorBody(t, w)
		allow := allowOf(t, api, tt.path)
		if w.Code != tt.status || int(code) != tt.status*100+1 || w.Header().Get("Allow") != allow || (tt.status == 405) != (allow != "") {
			t.Errorf("%s %s: got %d %d Allow %q, want %d Allow %q", tt.method, tt.path, w.Code, code, w.Header().Get("Allow"), tt.status, allow)
		}
	}
}

func serve(t *testing.T, api *API, method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	return sendJSON(t, api, r)
}

// sendJSON serves r as a writer with a JSON body would send it.
func sendJSON(t *testing.T, api *API, r *http.Request) *httptest.ResponseRecorder {
	r.Header.Set("Authorization", bearer(t))
	r.Header.Set("Content-Type", "application/json")
	return record(t, api, r)
}

// errorBody reads an Error body: exactly its two fields.
func errorBody(t *testing.T, w *httptest.ResponseRecorder) (code int32, message string) {
	t.Helper()
	if w.Code == 200 {
		return 0, ""
	}
	var fields map[string]json.RawMessage
	var e struct {
		Error   int32  `json:"error"`
		Message string `json:"message"`
	}
	out := w.Body.Bytes()
	if json.Unmarshal(out, &fields) != nil || len(fields) != 2 || json.Unmarshal(out, &e) != nil || e.Message == "" {
		t.Fatalf("status %d body %.200q is not an Error", w.Code, out)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("status %d with Content-Type %q", w.Code, ct)
	}
	return e.Error, e.Message
}

// The access line names the path asked for, escaped, without the query
// string, and cut at 256 bytes, never inside an escape.
func TestAccessLineNamesThePathSafely(t *testing.T) {
	long := "/" + strings.Repeat("a", 300)
	escapes := "/" + strings.Repeat("a", 253) + "%00b"
	tests := map[string]string{
		"/nope?token=secret":             "/nope",
		"/plants/%31":                    "/plants/%31",
		"/plants%00x":                    "/plants%00x",
		"/caf%C3%A9/%22quoted%22":        "/caf%C3%A9/%22quoted%22",
		"/a%0d%0aforged":                 "/a%0d%0aforged",
		long:                             long[:256],
		escapes:                          escapes[:254],
		"/" + strings.Repeat("%FF", 100): "/" + strings.Repeat("%FF", 85),
	}
	for target, want := range tests {
		var out bytes.Buffer
		api := newTestAPI(t, seededStore(t), DefaultMaxBodyBytes)
		api.deps.Log = slog.New(slog.NewJSONHandler(&out, nil))
		record(t, api, httptest.NewRequest(http.MethodGet, target, nil))
		var line struct{ Path string }
		if err := json.Unmarshal(out.Bytes(), &line); err != nil || line.Path != want {
			t.Errorf("GET %.40s: path %q in %s; want %q", target, line.Path, out.String(), want)
		}
	}
}
