package httpapi

import (
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// The plant's own JSON (the Plant, PlantItem and list bodies) is written by
// adapters/internal/plantjson, which the webhook's body shares.

// appendJSONString appends s as a JSON string, for the Error body. Text is
// kept as is: only what JSON requires is escaped (quote, backslash, control
// characters), not HTML characters or U+2028, which a JSON reader does not
// need. Invalid UTF-8 becomes U+FFFD; the error that reports it is dropped,
// since the answer is still correct JSON.
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
