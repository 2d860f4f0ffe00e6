package httpapi

import (
	"net/http"
	"strconv"
	"unicode/utf8"

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

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Text is kept as is, only the
// characters JSON requires are escaped; invalid UTF-8 becomes U+FFFD.
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				buf = append(buf, s[start:i]...)
				buf = append(buf, `\ufffd`...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
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
