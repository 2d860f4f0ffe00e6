package httpapi

import (
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/plantstore/plantstore/domain"
)

// appendPlant appends the Plant body: name, and tag only when it is set.
func appendPlant(buf []byte, p domain.Plant) []byte {
	buf = append(buf, `{"name":`...)
	buf = appendJSONString(buf, p.Name().String())
	if t := p.Tag(); t.IsSet() {
		buf = append(buf, `,"tag":`...)
		buf = appendJSONString(buf, t.String())
	}
	return append(buf, '}')
}

// appendJSONString appends s as a JSON string. Text is kept as is: only what
// JSON requires is escaped (quote, backslash, control characters), not HTML
// characters or U+2028, which a JSON reader does not need. Invalid UTF-8
// becomes U+FFFD; the error that reports it is dropped, since the answer is
// still correct JSON.
func appendJSONString(buf []byte, s string) []byte {
	buf, _ = jsontext.AppendQuote(buf, s)
	return buf
}

// writeJSON sends body with the JSON content type and an exact length.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

var jsonContentType = []string{"application/json"}
