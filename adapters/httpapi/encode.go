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

// appendPlantItem appends a plant in NewPlant's shape, as reads and lists
// answer it: id, name, and tag only when it is set.
func appendPlantItem(buf []byte, p domain.Plant) []byte {
	buf = append(buf, `{"id":`...)
	buf = strconv.AppendInt(buf, int64(p.ID()), 10)
	buf = append(buf, `,"name":`...)
	buf = appendJSONString(buf, p.Name().String())
	if t := p.Tag(); t.IsSet() {
		buf = append(buf, `,"tag":`...)
		buf = appendJSONString(buf, t.String())
	}
	return append(buf, '}')
}

// appendPlantList appends plants as a JSON array of items; none is [].
func appendPlantList(buf []byte, plants []domain.Plant) []byte {
	buf = append(buf, '[')
	for i, p := range plants {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendPlantItem(buf, p)
	}
	return append(buf, ']')
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
